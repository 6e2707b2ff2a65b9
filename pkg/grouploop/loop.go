package grouploop

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Loop is one group's poll loop: one goroutine, one pass per pollInterval.
type Loop struct {
	key   types.NamespacedName
	env   *Env
	log   logr.Logger
	conns *conns
	// stopper stops a site's replication before its reclone replaces its
	// data (conns; a fake in tests).
	stopper replicationStopper
	// recloneStopped is the identity of the reclone whose site's
	// replication this process stopped in an earlier pass (reclone_wipe.go).
	recloneStopped string
	// recloneUnremoved is the reclone-site value this process last failed
	// to remove (reclone.go, answered).
	recloneUnremoved string
	patcher          *statusPatcher
	emergency        *failover.Emergency
	planned          *plannedRunner
	// cache keeps the group's Dragonfly following the active site (cache.go).
	cache *cacheFollower
	wake  <-chan struct{} // Env.Wake: pass now

	// Memory of this operator's life; the persisted status is the rest.
	deb        map[string]*topology.Debouncer
	thresholds [2]int32
	obs        map[string]observation // this pass's probe results
	last       map[string]observation // last successful probe per site
	seenPod    map[string]bool
	answered   map[string]bool        // sites observed reachable at least once (answeredOnce)
	podsNow    map[string][]time.Time // each site's Pods' "absent since" (observePods), nil when unknown
	waitSince  map[string]time.Time   // when a gated action first waited, by action
	maybeSince map[string]time.Time   // when this operator first saw a site's maybeWritable mark
	silentArm  map[string]time.Time   // the sidecar ask a silent site's lease fence was last armed for
	marks      seqMarks               // the same moments on the view sequence (failmark.go)
	// Pods and their nodes (podgone.go): the last listing, the Pods seen gone
	// with their node's heartbeat then, and since when their kubelets stopped them.
	podNodes       map[string]map[types.UID]podNode
	goneNodes      map[string]map[types.UID]goneWatch
	kubeletStopped map[string]time.Time
	provenAt       map[string]time.Time // the last time a site's gone Pods were proven stopped
	// podAbsent is each listed Pod's "absent since", podListedAt the start
	// of the last successful listing (observePods).
	podAbsent   map[types.UID]time.Time
	podListedAt time.Time
	// The pass's snapshot (monotonic clock): mayMakeWritable reads them.
	interval       time.Duration
	observeStarted time.Time
	observedAt     time.Time
	lastWait       string    // the emergency sequence's last logged wait
	stalledSince   time.Time // the progress time of the stalled update last reported (rollout.go)
	// Semi-sync (semisync.go): whether the active site's commits waited at
	// the last probe. The part last applied to each site is in conns.
	semiWaiting bool
	// maintained is set by the pass's act when it maintained a healthy or
	// degraded group and did nothing else: the ordered update may act
	// (rollout.go). untainted is the generation at which each site's nodes
	// lost the lost-primary taint (untaint.go).
	maintained bool
	untainted  map[string]int64
	// due is when the next timed pass should start (Step); zero when the
	// next one is not on the poll schedule (a planned failover's step).
	due time.Time
}

// New returns the group's loop, with a fresh memory (a new operator
// process's). A receive on wake starts the next pass at once; nil never does.
func New(env *Env, key types.NamespacedName, wake <-chan struct{}) *Loop {
	l := &Loop{key: key, env: env, wake: wake, log: env.Log.WithValues("group", key.String()),
		conns:   newConns(env.Resolver, env.Open),
		patcher: &statusPatcher{c: env.Client, reader: env.Reader},
		deb:     map[string]*topology.Debouncer{}, last: map[string]observation{},
		seenPod: map[string]bool{}, answered: map[string]bool{}, waitSince: map[string]time.Time{},
		maybeSince: map[string]time.Time{}, silentArm: map[string]time.Time{}, podNodes: map[string]map[types.UID]podNode{},
		goneNodes: map[string]map[types.UID]goneWatch{}, kubeletStopped: map[string]time.Time{},
		provenAt: map[string]time.Time{}, untainted: map[string]int64{}}
	l.stopper = l.conns
	if env.Nudge != nil {
		l.conns.promoted = func(site string) { env.Nudge(key, site) }
	}
	l.emergency = failover.NewEmergency(failover.Env{DB: l.conns, Router: env.Router, Persister: l.patcher,
		Publisher: env.Registry, Notifier: env.Notifier, Clock: env.Clock})
	l.cache = &cacheFollower{conns: newCacheConns(key.Namespace, key.Name, env.CacheAddr)}
	if r, ok := env.Router.(failover.CacheRouter); ok {
		l.cache.router = r
	}
	l.planned = newPlannedRunner(l)
	return l
}

// Run makes passes until ctx ends or the group is gone.
func (l *Loop) Run(ctx context.Context) {
	defer l.conns.close()
	defer l.cache.conns.Close()
	for {
		wait, stop := l.Step(ctx)
		if stop {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-l.env.Clock.After(wait):
			l.observeStartLag()
		}
	}
}

// observeStartLag records how late a timed pass starts against its
// schedule: a slow pass, a starved goroutine or a late timer all show.
func (l *Loop) observeStartLag() {
	if l.due.IsZero() || l.env.Metrics == nil {
		return
	}
	l.env.Metrics.PassStartLag.Observe(max(l.env.Clock.Since(l.due), 0).Seconds())
}

// Step is one observe-decide-act-record pass and the wait until the next:
// the rest of the pollInterval, or less while a planned failover moves on.
// A group that is gone is forgotten and stops the loop.
func (l *Loop) Step(ctx context.Context) (time.Duration, bool) {
	start := l.env.Clock.Now()
	interval, stop := l.pass(ctx)
	if stop {
		l.env.Registry.Forget(l.key)
		l.env.Metrics.forget(l.key.Namespace, l.key.Name)
		return 0, true
	}
	if l.env.Passed != nil {
		l.env.Passed(l.key, interval)
	}
	wait := max(interval-l.env.Clock.Since(start), 10*time.Millisecond)
	l.due = start.Add(interval)
	if next, ok := l.plannedNext(); ok && next < wait {
		wait, l.due = next, time.Time{} // a planned failover moves on at once
	}
	return wait, false
}

// defaultPollInterval is used until the group can be read.
const defaultPollInterval = 2 * time.Second

// pass is one observe-decide-act round. It reports the interval to the next
// pass, and stop when the group is gone.
func (l *Loop) pass(ctx context.Context) (time.Duration, bool) {
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := l.env.Reader.Get(ctx, l.key, g); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, true
		}
		l.log.Error(err, "read group")
		return defaultPollInterval, false
	}
	if !g.DeletionTimestamp.IsZero() {
		return 0, true
	}
	interval := max(g.Spec.PollInterval.Duration, 50*time.Millisecond)
	if g.Spec.PollInterval.Duration <= 0 {
		interval = defaultPollInterval
	}
	l.interval = interval
	l.patcher.reset(g)
	l.env.Registry.Know(l.key, siteNames(g))
	if l.authorityHold(ctx, g) {
		return interval, false
	}
	if err := l.bootstrap(ctx, g); err != nil {
		l.log.Error(err, "first start")
		return interval, false
	}
	l.env.Registry.Publish(g)
	l.conns.refresh(ctx, g)
	l.observe(ctx, g, l.probeTimeout(interval))
	l.noteFailures(g)
	p, err := l.buildPass(g)
	if err != nil {
		l.log.Error(err, "decide")
		return interval, false
	}
	l.maintained = false
	if l.env.Budget != nil {
		l.env.Budget(l.key, p.Settings.PassBudget())
	}
	l.proveLeaseFences(ctx, p)
	l.act(ctx, p)
	l.rollout(ctx, p, l.maintained)
	l.restartInPlace(ctx, g)
	l.reclone(ctx, p)
	l.readRoutes(ctx, p)
	l.untaint(ctx, p)
	l.record(ctx, p)
	return interval, false
}

func (l *Loop) probeTimeout(interval time.Duration) time.Duration {
	if t := l.env.Options.ProbeTimeout; t > 0 {
		return t
	}
	return interval
}

// bootstrap is the first start: the first primary-candidate site becomes
// active at generation 1 (the loop then makes it writable and points the
// others at it). A group whose authority was lost later (generation > 0,
// no active site) is left to Decide, which prefers the sites that write.
func (l *Loop) bootstrap(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	st := &g.Status
	if st.ActiveSite != "" || st.TopologyGeneration > 0 {
		return nil
	}
	st.ActiveSite = routing.InitialSite(g)
	if st.ActiveSite == "" {
		return fmt.Errorf("no primary-candidate site in %s", l.key)
	}
	st.TopologyGeneration = 1
	for _, s := range g.Spec.Sites {
		failover.SiteRecord(st, s.Name)
	}
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		return err
	}
	l.log.Info("first start", "activeSite", st.ActiveSite)
	return nil
}

// buildPass snapshots the group for Decide and the failover sequence.
func (l *Loop) buildPass(g *v1alpha1.MysqlFailoverGroup) (failover.Pass, error) {
	now := l.env.Clock.Now()
	st := &g.Status
	in := topology.Input{ActiveSite: st.ActiveSite, Generation: st.TopologyGeneration, History: failover.History(st),
		Promoted: failover.Promoted(st), PromotedKnown: failover.PromotedKnown(st), InFlight: failover.InFlight(st), PlannedInFlight: l.plannedHolds(g), Cooldown: g.Spec.FailoverCooldown.Duration,
		MaxLag: l.env.Options.MaxLag, Now: now}
	settings := failover.SettingsFor(g, l.env.Options.Failover)
	p := failover.Pass{Group: g, Settings: settings,
		Evidence: func(site string) topology.Evidence { return l.evidence(g, site, settings) },
		Sidecar: func(site string) (int64, bool) {
			return l.env.Registry.Generation(l.key, site, settings.LeaseTimeout)
		},
		SidecarAskedAt: l.sidecarAskedAt,
		MayMakeWritable: func(ctx context.Context, site string, fresh time.Time) error {
			err := l.mayMakeWritable(ctx, site, settings.PeerCheckInterval, fresh)
			if err != nil {
				l.staleEvent(g, err)
			} else {
				l.env.Notifier.clearOnChange(g, v1alpha1.ReasonStaleSnapshot)
				l.env.Notifier.clearOnChange(g, v1alpha1.ReasonSidecarSilent)
			}
			return err
		}}
	for _, s := range g.Spec.Sites {
		in.Sites = append(in.Sites, l.siteView(g, s, p.Evidence))
	}
	l.adminFence(g, &in)
	holdRecloning(g, in)
	l.markAcknowledgers(g, in.Sites)
	in = topology.Judge(in) // every reader of the pass sees the sites as Decide does
	d, err := topology.Decide(in)
	if err != nil {
		return p, err
	}
	p.Input, p.Decision = in, d
	p.SemiSync = l.semiSyncPass(g, in.Sites)
	return p, nil
}

// Close closes the loop's database connections (Run closes them when it
// returns; a loop driven by Step alone needs Close).
func (l *Loop) Close() { l.conns.close() }

// plannedHolds reports whether a planned failover owns the topology.
func (l *Loop) plannedHolds(g *v1alpha1.MysqlFailoverGroup) bool {
	return failover.PlannedInFlight(&g.Status)
}

// stamp is a status time: RFC 3339 keeps whole seconds, so keeping more
// would make every write look like a change.
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }
