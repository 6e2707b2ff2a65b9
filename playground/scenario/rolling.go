package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{23, "rolling-update", "under load, the sidecar image and leaseTimeout change: one site at a time, " +
		"the primary last after one switchover; nothing lost, the write gap no longer than a planned failover's", rollingUpdate})
}

// rollingTimings are the short timings with a cooldown of 15 s: the
// reference switchover's cooldown ends while the replicas are updated.
var rollingTimings = Timings{PollInterval: time.Second, FailureThreshold: 2, LeaseTimeout: 6 * time.Second,
	PeerCheckInterval: 2 * time.Second, Cooldown: 15 * time.Second}

// The change the update rolls out: another sidecar image (the local
// cluster runs bin/sidecar for every bloodraven-sidecar image, so the
// Pod template changes as with a real new image, and the same program
// runs) and another lease.
const (
	rollingImage = "ghcr.io/shipstream/bloodraven-sidecar:rolling"
	rollingLease = 8 * time.Second
)

// rollingUpdateBound is how much longer than the reference switchover's
// window the update's longest write gap may be: the goal is 1.5 times
// (issue 18), but on a loaded machine one switchover's window varies
// severalfold, so the check is generous and the figure is printed.
func rollingUpdateBound(ref time.Duration) time.Duration { return 3*ref + 2*time.Second }

func rollingUpdate(ctx context.Context, e *Env) Result {
	return rollingUpdateWith(ctx, e, "rolling-update", LoadOptions{}, specChange)
}

// rollChange is the change an ordered update rolls out.
type rollChange struct {
	// apply makes the change.
	apply func(ctx context.Context, g *Group) error
	// lease is the lease the new Pods' sidecars run with (the group's when zero).
	lease time.Duration
}

// specChange changes the group's spec: spec.sidecar.image and leaseTimeout.
var specChange = rollChange{lease: rollingLease, apply: func(ctx context.Context, g *Group) error {
	_, err := g.e.C.Kubectl(ctx, "-n", g.NS, "patch", "mysqlfailovergroup", g.Name, "--type", "merge", "-p",
		fmt.Sprintf(`{"spec":{"sidecar":{"image":%q,"leaseTimeout":%q}}}`, rollingImage, rollingLease))
	return err
}}

// rollingUpdateWith runs rolling-update with the given load: the
// scenario's writers go through the DNS name, the bench's through the
// -primary Service, as the planned measure's do, so that the two
// windows compare.
func rollingUpdateWith(ctx context.Context, e *Env, name string, lo LoadOptions, ch rollChange) Result {
	plan := Plan{Timings: rollingTimings, Sites: append(append([]string(nil), Sites...), ThirdSite), Load: lo}
	return play(ctx, e, name, plan, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		return rollingUpdateBody(ctx, g, l, r, ch)
	})
}

// rollingUpdateBody switches the primary over once by annotation (site-a
// to site-b) to measure a planned failover's window on this group, under
// this load, then makes the change (specChange: the sidecar image and
// leaseTimeout) and waits for the ordered update to finish, watching
// every site all along. It records the figures window-ms (the longest gap
// between two of the writers' acknowledged writes from the change to the
// end of the update) and duration-s (the change to the update seen complete).
func rollingUpdateBody(ctx context.Context, g *Group, l *Load, r *Result, ch rollChange) error {
	if ch.lease == 0 {
		ch.lease = g.T.LeaseTimeout
	}
	ref, err := referenceSwitch(ctx, g, l, r)
	if err != nil {
		return err
	}
	u, err := watchUpdate(ctx, g, l, r, ch)
	if err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, u.mg.Status.ActiveSite, false, u.done, 30*time.Second); err != nil {
		return err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	evs := g.eventCounts(ctx)
	rep := r.finish(ctx, l, -1)
	checkOneSiteDown(u.samples, g.Sites, r)
	checkOneSwitchover(u.mg, g.Sites[1], evs, u.samples, r)
	if after, err := g.sitePods(ctx); err != nil {
		r.Failf("site Pods after the update: %v", err)
	} else {
		checkCleanStops(ctx, g, u.before, after, r)
	}
	for _, s := range g.Sites {
		if evs[v1alpha1.EventSiteUpdated+"/"+s] != 1 {
			r.Failf("%d SiteUpdated Events for %s, want 1", evs[v1alpha1.EventSiteUpdated+"/"+s], s)
		}
	}
	window, took := longestGap(l.hist.Attempts, u.change, u.done), u.done.Sub(u.change)
	if bound := rollingUpdateBound(ref); window > bound {
		r.Failf("longest write gap during the update %s, more than %s (3 × the reference switchover's %s + 2 s)",
			window.Round(time.Millisecond), bound, ref.Round(time.Millisecond))
	}
	r.Figure("window-ms", float64(window.Milliseconds()))
	r.Figure("duration-s", took.Seconds())
	r.Notef("longest write gap during the update %s, %.1f × the reference switchover's %s (goal 1.5 ×); "+
		"update %.1fs; %d writes failed during it; longest unavailability of the run %s",
		window.Round(time.Millisecond), float64(window)/float64(max(ref, time.Millisecond)),
		ref.Round(time.Millisecond), took.Seconds(), failedBetween(l.hist.Attempts, u.change, u.done),
		rep.MaxWindow.Round(time.Millisecond))
	return nil
}

// referenceSwitch moves the primary from the first site to the second by
// annotation, returns that planned failover's write window, and waits
// until the group is settled there again.
func referenceSwitch(ctx context.Context, g *Group, l *Load, r *Result) (time.Duration, error) {
	ref, err := switchOver(ctx, g, l, r, g.Sites[0], g.Sites[1])
	if err != nil {
		return 0, fmt.Errorf("reference switchover: %w", err)
	}
	r.Figure("reference-window-ms", float64(ref.Window.Milliseconds()))
	if err := g.WaitActive(ctx, g.Sites[1], 2, time.Minute); err != nil {
		return 0, err
	}
	for _, s := range []string{g.Sites[0], g.Sites[2]} {
		if _, err := g.Wait(ctx, s+" replicating", time.Minute, replicating(s)); err != nil {
			return 0, err
		}
	}
	return ref.Window, nil
}

// update is what watchUpdate saw.
type update struct {
	change, done time.Time
	samples      []siteSample
	// mg is the group at the end.
	mg *v1alpha1.MysqlFailoverGroup
	// before are the site Pods before the change, by site.
	before map[string]string
}

// watchUpdate makes the change and waits until the ordered update is
// complete, looking at every site all along.
func watchUpdate(ctx context.Context, g *Group, l *Load, r *Result, ch rollChange) (update, error) {
	before, err := g.sitePods(ctx)
	if err != nil {
		return update{}, err
	}
	sw, err := g.watchSites(ctx)
	if err != nil {
		return update{}, err
	}
	_ = sleepCtx(ctx, time.Second) // a few samples before the change
	u := update{change: l.Mark("change"), before: before}
	if err = ch.apply(ctx, g); err == nil {
		u.mg, err = g.Wait(ctx, "ordered update complete", 4*time.Minute, g.updated(before, ch.lease))
	}
	u.done = l.Mark("updated")
	u.samples = sw.stop()
	r.Notef("update: %s", phaseHistory(u.samples, u.change))
	return u, err
}

// sitePods maps each site to its live Pod's name.
func (g *Group) sitePods(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range g.Sites {
		pod, _, err := g.Pod(ctx, s)
		if err != nil {
			return nil, err
		}
		out[s] = pod
	}
	return out, nil
}

// updated is the end of the ordered update: status.phase empty, the
// group Ready at a later generation with no failover in flight, and every
// site's one live Pod a new one, Ready, running the new sidecar image and lease.
func (g *Group) updated(before map[string]string, lease time.Duration) func(*v1alpha1.MysqlFailoverGroup) error {
	return func(mg *v1alpha1.MysqlFailoverGroup) error {
		st := mg.Status
		switch {
		case st.Phase != v1alpha1.GroupPhaseNone:
			return fmt.Errorf("phase %s: %s", st.Phase, st.Message)
		case st.Failover != nil:
			return fmt.Errorf("failover in flight at %s", st.Failover.Step)
		case st.TopologyGeneration < 3:
			return fmt.Errorf("generation %d: the primary was not switched over yet", st.TopologyGeneration)
		}
		if err := install.Healthy(mg, st.ActiveSite); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pods, err := g.e.C.Client.CoreV1().Pods(g.NS).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelSite})
		if err != nil {
			return err
		}
		for _, s := range g.Sites {
			if err := podUpdated(pods.Items, s, before[s], lease); err != nil {
				return err
			}
		}
		return nil
	}
}

// podUpdated says why site's Pods are not one new, Ready Pod that runs the
// new sidecar image and lease.
func podUpdated(pods []corev1.Pod, site, old string, leaseTimeout time.Duration) error {
	var live []corev1.Pod
	for _, p := range pods {
		if p.Labels[v1alpha1.LabelSite] == site {
			live = append(live, p)
		}
	}
	if len(live) != 1 {
		return fmt.Errorf("%s has %d Pods", site, len(live))
	}
	p := live[0]
	if p.Name == old || p.DeletionTimestamp != nil || !podReady(&p) {
		return fmt.Errorf("%s: Pod %s not replaced or not Ready", site, p.Name)
	}
	for _, c := range p.Spec.Containers {
		if c.Name != routing.ContainerSidecar {
			continue
		}
		lease := "--lease-timeout=" + leaseTimeout.String()
		if c.Image != rollingImage || !strings.Contains(strings.Join(c.Args, " "), lease) {
			return fmt.Errorf("%s: Pod %s runs sidecar %s %v, want %s with %s", site, p.Name, c.Image, c.Args, rollingImage, lease)
		}
		return nil
	}
	return fmt.Errorf("%s: Pod %s has no sidecar", site, p.Name)
}

// checkOneSiteDown fails r for every moment two sites were down, and notes
// each site's down stretches.
func checkOneSiteDown(samples []siteSample, sites []string, r *Result) {
	if len(samples) == 0 {
		r.Failf("the sites were never looked at")
		return
	}
	t0 := samples[0].At
	var spans []string
	downs := map[string]int{}
	for _, d := range downSpans(samples) {
		downs[d.Site]++
		spans = append(spans, fmt.Sprintf("%s %+.1fs..%+.1fs (%s)", d.Site, d.From.Sub(t0).Seconds(), d.To.Sub(t0).Seconds(), d.Why))
	}
	r.Notef("sites down (%d samples, every %s or so): %s", len(samples), 250*time.Millisecond, strings.Join(spans, ", "))
	for _, s := range sites {
		if downs[s] == 0 {
			r.Failf("%s was never seen down: was it restarted?", s)
		}
	}
	two := twoDown(samples)
	for i, s := range two {
		if i == 3 {
			r.Failf("… two sites down in %d samples in all", len(two))
			break
		}
		r.Failf("two sites down at once: %s", describeDown(s))
	}
}

// checkOneSwitchover fails r unless exactly one failover happened during
// the update: a planned one the update started, away from the primary
// the update began with.
func checkOneSwitchover(mg *v1alpha1.MysqlFailoverGroup, from string, evs map[string]int, samples []siteSample, r *Result) {
	st := mg.Status
	if st.TopologyGeneration != 3 {
		r.Failf("topology generation %d after the update, want 3 (the reference switchover and one more)", st.TopologyGeneration)
	}
	lf := st.LastFailover
	if lf == nil || lf.Kind != v1alpha1.KindPlanned || lf.From != from || lf.To == from {
		r.Failf("lastFailover %+v, want a planned failover from %s", lf, from)
	}
	if p := st.PlannedFailover; p == nil || p.Origin != v1alpha1.OriginUpdate || p.Phase != v1alpha1.PhaseSucceeded {
		r.Failf("plannedFailover %+v, want one the update started, Succeeded", p)
	}
	if n := evs[v1alpha1.EventUpdateSwitchover]; n != 1 {
		r.Failf("%d UpdateSwitchover Events, want 1", n)
	}
	if n := evs[v1alpha1.EventUpdateCompleted]; n != 1 {
		r.Failf("%d UpdateCompleted Events, want 1", n)
	}
	gens := map[int64]bool{}
	for _, s := range samples {
		gens[s.Gen] = true
	}
	if len(gens) > 2 {
		r.Failf("generations seen during the update %v, want 2 then 3", gens)
	}
}

// eventCounts counts the group namespace's Events by reason, and the
// SiteUpdated ones also as SiteUpdated/<site> (the site the message names last).
func (g *Group) eventCounts(ctx context.Context) map[string]int {
	out := map[string]int{}
	evs, err := g.e.C.Client.CoreV1().Events(g.NS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, ev := range evs.Items {
		n := max(int(ev.Count), 1)
		out[ev.Reason] += n
		if ev.Reason == v1alpha1.EventSiteUpdated {
			f := strings.Fields(ev.Message)
			out[ev.Reason+"/"+f[len(f)-1]] += n
		}
	}
	return out
}

// phaseHistory renders every change of status phase, message, active site
// and generation the samples saw, relative to t0.
func phaseHistory(samples []siteSample, t0 time.Time) string {
	var out []string
	var last siteSample
	for i, s := range samples {
		if i > 0 && s.Phase == last.Phase && s.Message == last.Message && s.Active == last.Active && s.Gen == last.Gen {
			continue
		}
		last = s
		out = append(out, fmt.Sprintf("%+.1fs %s@%d %s %q", s.At.Sub(t0).Seconds(), s.Active, s.Gen, s.Phase, s.Message))
	}
	return strings.Join(out, ", ")
}

// longestGap is the longest time between two consecutive acknowledged
// writes of the writers, counting from t0 to t1 (from the last
// acknowledgement before t0, to the first after t1 if t1 falls in a gap).
func longestGap(as []load.Attempt, t0, t1 time.Time) time.Duration {
	var ends []time.Time
	for _, a := range as {
		if a.OK {
			ends = append(ends, a.End)
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	var longest time.Duration
	for i := 1; i < len(ends); i++ {
		if ends[i].Before(t0) || ends[i-1].After(t1) {
			continue
		}
		longest = max(longest, ends[i].Sub(ends[i-1]))
	}
	return longest
}

// failedBetween counts the writers' failed attempts that ended between t0 and t1.
func failedBetween(as []load.Attempt, t0, t1 time.Time) int {
	n := 0
	for _, a := range as {
		if !a.OK && a.End.After(t0) && a.End.Before(t1) {
			n++
		}
	}
	return n
}
