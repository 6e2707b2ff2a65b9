package grouploop

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// observation is one probe of a site.
type observation struct {
	status  mysql.Status
	err     error
	at      time.Time
	latency time.Duration
}

// probe is the debouncer's view of an observation.
func (o observation) probe() topology.Probe {
	switch {
	case o.err != nil:
		return topology.ProbeFailed
	case o.status.Writable():
		return topology.ProbeWritable
	}
	return topology.ProbeReadOnly
}

// observe probes every site in parallel, each bounded by timeout, and feeds
// the debouncers. A hung site costs the pass at most timeout.
func (l *Loop) observe(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, timeout time.Duration) {
	l.ensureDebouncers(g)
	l.observeStarted, l.observedAt = l.env.Clock.Now(), time.Time{}
	obs := make(map[string]observation, len(g.Spec.Sites))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range g.Spec.Sites {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := l.env.Clock.Now()
			st, err := l.conns.Status(pctx, s.Name)
			o := observation{status: st, err: err, at: l.env.Clock.Now()}
			o.latency = o.at.Sub(start)
			mu.Lock()
			obs[s.Name] = o
			mu.Unlock()
		})
	}
	wg.Wait()
	l.observedAt = l.env.Clock.Now()
	l.obs = obs
	for _, s := range g.Spec.Sites {
		o := obs[s.Name]
		l.env.Metrics.PollLatency.WithLabelValues(g.Namespace, g.Name, s.Name).Observe(o.latency.Seconds())
		if o.err == nil {
			l.last[s.Name] = o
		}
		l.firstAnswer(g, s.Name, o.probe())
		state, changed, err := l.deb[s.Name].Observe(o.at, o.probe())
		if err != nil {
			l.log.Error(err, "debounce", "site", s.Name)
			continue
		}
		if changed && state == topology.ShownState(state, !l.answeredOnce(g, s.Name)) {
			l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventSiteStateChanged,
				fmt.Sprintf("site %s is %s", s.Name, state))
		}
	}
	l.observePods(ctx, g)
}

// ensureDebouncers (re)makes the debouncers when the sites or thresholds change.
func (l *Loop) ensureDebouncers(g *v1alpha1.MysqlFailoverGroup) {
	th := [2]int32{max(g.Spec.FailureThreshold, 1), max(g.Spec.RecoveryThreshold, 1)}
	if th != l.thresholds {
		l.deb, l.thresholds = map[string]*topology.Debouncer{}, th
	}
	for _, s := range g.Spec.Sites {
		if l.deb[s.Name] == nil {
			d, err := topology.NewDebouncer(int(th[0]), int(th[1]))
			if err != nil {
				panic(fmt.Sprintf("thresholds clamped to 1 but %v", err)) // cannot happen
			}
			l.deb[s.Name] = d
		}
	}
}

// observePods records when each site's Pods were last known absent, for
// the pod-gone confirmation, and hands the listing to the registry, which
// ties sidecar reports to Pods and notes when a Pod went away, for the
// lease deadline.
//
// A Pod's "absent since" is the start (this operator's clock) of the last
// listing that did not show it, zero for a Pod in this loop's first
// listing: it did not exist then, so it was created later. Its
// creationTimestamp, on the API server's clock, is never compared with
// this operator's. The listing is read from the API server itself, never
// from the informer cache: a cache lagging by more than a poll would show
// a Pod absent after a failure although it existed (and wrote) before it.
func (l *Loop) observePods(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) {
	start := l.env.Clock.Now()
	var pods corev1.PodList
	reader := l.env.Reader
	if reader == nil {
		reader = l.env.Client
	}
	err := reader.List(ctx, &pods, client.InNamespace(g.Namespace), client.MatchingLabels{v1alpha1.LabelGroup: g.Name})
	if err != nil {
		l.podsNow = nil // unknown: nothing counts as gone
		return
	}
	l.podsNow = map[string][]time.Time{}
	absent := make(map[types.UID]time.Time, len(pods.Items))
	refs := map[string][]authority.PodRef{}
	nodes := map[string]map[types.UID]podNode{}
	for _, p := range pods.Items {
		site := p.Labels[v1alpha1.LabelSite]
		since, known := l.podAbsent[p.UID]
		if !known {
			since = l.podListedAt // zero on the first listing
		}
		absent[p.UID] = since
		l.podsNow[site] = append(l.podsNow[site], since)
		l.seenPod[site] = true
		refs[site] = append(refs[site], sidecarOf(p))
		if nodes[site] == nil {
			nodes[site] = map[types.UID]podNode{}
		}
		nodes[site][p.UID] = podNode{node: p.Spec.NodeName, grace: p.Spec.TerminationGracePeriodSeconds,
			deletionGrace: p.DeletionGracePeriodSeconds}
	}
	l.podAbsent, l.podListedAt = absent, start
	for _, s := range g.Spec.Sites {
		l.env.Registry.SawPods(l.key, s.Name, refs[s.Name])
		l.trackGonePods(ctx, s.Name, nodes[s.Name])
	}
}

// sidecarOf is a Pod as the registry needs it: its UID, and its sidecar
// container's restart count and start.
func sidecarOf(p corev1.Pod) authority.PodRef {
	ref := authority.PodRef{UID: p.UID}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != routing.ContainerSidecar {
			continue
		}
		ref.SidecarRestarts = cs.RestartCount
		if cs.State.Running != nil {
			ref.SidecarStarted = cs.State.Running.StartedAt.Time
		}
	}
	return ref
}

// podGone reports whether every Pod the site had when its failure was first
// observed is gone: this operator saw the site's Pods, and each one left
// was absent from a listing that started after the failure was first seen
// (observePods; this operator's clock only). Its mysqld booted fenced and
// was never made writable: that needs a pass that probed it before the
// failure, whose listing (read from the API server, started after that
// probe, at least a poll before this one) would have shown it.
// And the kubelet of each node a gone Pod ran on has stopped its
// containers (podgone.go): a Pod gone from the API is not a process gone.
func (l *Loop) podGone(site string, failingSince time.Time) bool {
	if l.stoppedAt(site).IsZero() || !l.seenPod[site] || failingSince.IsZero() {
		return false
	}
	for _, absent := range l.podsNow[site] {
		if !absent.After(failingSince) {
			return false
		}
	}
	return true
}

// siteView is a site as Decide sees it.
func (l *Loop) siteView(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site, ev func(string) topology.Evidence) topology.SiteView {
	d, o := l.deb[s.Name], l.obs[s.Name]
	var fresh topology.Probe
	if !o.at.IsZero() {
		fresh = o.probe()
	}
	v := topology.SiteView{Name: s.Name, Role: s.Role, State: topology.WithFreshProbe(d.State(), fresh),
		NeverAnswered: !l.answeredOnce(g, s.Name), Stale: o.err != nil}
	for _, rec := range g.Status.Sites {
		if rec.Name == s.Name {
			v.Diverged = rec.DivergentGtid != ""
		}
	}
	v.ServerID = recordedServerID(&g.Status, s.Name)
	if last, ok := l.last[s.Name]; ok {
		st := last.status
		v.Executed = st.Executed
		v.SemiSyncUnavailable = g.Spec.MySQL.SemiSync.Enabled && st.SemiSync.Missing != ""
		if id := serverID(st); id != "" {
			v.ServerID = id
		}
		if rs := st.Replica; rs != nil {
			v.Replication = topology.Replication{Running: rs.IORunning == mysql.ThreadYes && rs.SQLRunning}
			candidacy(&v.Replication, *rs, st.Flavor)
			v.Replication.ReceivedLost = l.emergency.ReceivedLost(s.Name, v.Replication.Retrieved)
			v.Replication.SemiSyncAcking = l.semiSyncAcking(g, st)
			if st.Uptime > 0 {
				v.Replication.Started = last.at.Add(-st.Uptime)
			}
			if err := rs.Err(); err != nil {
				v.Replication.Error = err.Error()
			}
			if rs.SecondsBehind >= 0 {
				v.Replication.Lag = time.Duration(rs.SecondsBehind) * time.Second
			}
		}
	}
	v.MaybeWritable = failover.MaybeWritable(&g.Status, s.Name)
	if v.State == v1alpha1.StateUnreachable || v.State == v1alpha1.StateUnknown {
		ok, _ := topology.ConfirmFence(ev(s.Name))
		v.FenceConfirmed = ok || failover.HeldReadOnly(&g.Status, s.Name)
	}
	return v
}

// serverID is the GTID source id a server writes under: MySQL's server_uuid,
// MariaDB's "<domain>-<server_id>" (domain 0, the default).
func serverID(st mysql.Status) string {
	if st.Flavor == v1alpha1.FlavorMySQL {
		return st.ServerUUID
	}
	if st.ServerID == 0 {
		return ""
	}
	return fmt.Sprintf("0-%d", st.ServerID)
}

// evidence is what this operator knows about whether site can write. It
// reads g's status when called, so that a just-published intent counts.
func (l *Loop) evidence(g *v1alpha1.MysqlFailoverGroup, site string, s failover.Settings) topology.Evidence {
	reg := l.env.Registry
	ev := topology.Evidence{Site: site, Now: l.env.Clock.Now(), Active: g.Status.ActiveSite, Operator: reg.OperatorID(),
		LeaseTimeout: s.LeaseTimeout, PeerCheckInterval: s.PeerCheckInterval, LastContact: reg.Started()}
	ev.LeaseFenceUnproven = failover.LeaseFenceUnproven(&g.Status, site)
	ev.FailingSince = l.evidenceSince(g, site)
	ev.FailingSeq = l.evidenceSeq(g, site)
	ev.PodGone = l.podGone(site, ev.FailingSince)
	sv := reg.Sidecar(l.key, site)
	ev.Report = sv.Report()
	if sv.LastServed().After(ev.LastContact) {
		ev.LastContact = sv.LastServed()
	}
	for _, p := range g.Spec.Sites {
		if p.Name != site {
			pv := reg.Sidecar(l.key, p.Name)
			ev.Peers = append(ev.Peers, pv.Peer(p.Name, g.Status.TopologyGeneration, l.stoppedAt(p.Name),
				l.provenAt[p.Name], l.gonePending(p.Name)))
		}
	}
	return ev
}

// failingSince is when this operator first saw the site's current run of
// failed probes; zero when its last probe succeeded.
func (l *Loop) failingSince(site string) time.Time {
	if d := l.deb[site]; d != nil {
		if since, failing := d.FailingSince(); failing {
			return since
		}
	}
	return time.Time{}
}
