package grouploop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// The reclone phase machine against a fake Recloner and a fake API server:
// what status says after each pass, what the person is told, and that the
// site under reclone is never a writer nor a failover candidate whatever
// happens to the rest of the group meanwhile.

const cDivergent = "0-3:1-3"

// fakeRecloner plays the sites' sidecars: each phase needs `after` asks
// before it is done, unless it fails.
type fakeRecloner struct {
	after   int
	asked   map[v1alpha1.RecoveryPhase]int
	fail    map[v1alpha1.RecoveryPhase]string
	err     error
	onDone  func(phase v1alpha1.RecoveryPhase)
	request map[string]bool
	// donors is the donor of every Cloning ask.
	donors []string
}

func newFakeRecloner() *fakeRecloner {
	return &fakeRecloner{after: 2, asked: map[v1alpha1.RecoveryPhase]int{}, fail: map[v1alpha1.RecoveryPhase]string{},
		request: map[string]bool{}}
}

func (f *fakeRecloner) Run(_ context.Context, _ types.NamespacedName, site string, s RecloneStep) (RecloneProgress, error) {
	if site != "c" {
		return RecloneProgress{}, errors.New("asked of " + site)
	}
	f.asked[s.Phase]++
	f.request[s.Request] = true
	if s.Phase == v1alpha1.RecoveryCloning {
		f.donors = append(f.donors, s.Donor)
	}
	if f.err != nil {
		return RecloneProgress{}, f.err
	}
	if why := f.fail[s.Phase]; why != "" {
		return RecloneProgress{Failed: why}, nil
	}
	if f.asked[s.Phase] < f.after {
		return RecloneProgress{}, nil
	}
	if f.onDone != nil {
		f.onDone(s.Phase)
	}
	return RecloneProgress{Done: true, PreservedAt: "pvc/orders-c-diverged-20260420T140000Z"}, nil
}

// recloneWorld is a group of three sites, a active; c diverged.
type recloneWorld struct {
	t     *testing.T
	cl    client.Client
	l     *Loop
	rec   *fakeRecloner
	ev    *events.FakeRecorder
	views map[string]topology.SiteView
	// decisions are Decide's answers, one a pass.
	decisions []topology.Decision
	// phases is status.sites[c].recovery.phase after each pass.
	phases []v1alpha1.RecoveryPhase
	stops  int
}

func mustSet(t *testing.T, s string) gtid.Set {
	t.Helper()
	set, err := gtid.ParseSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func newRecloneWorld(t *testing.T) *recloneWorld {
	g := testGroup("orders", "a", 4)
	g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	g.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b"}, {Name: "c", DivergentGtid: cDivergent}}
	w := &recloneWorld{t: t, cl: fakeStatusClient(t, g), rec: newFakeRecloner(), ev: events.NewFakeRecorder(100)}
	replicating := topology.Replication{Running: true}
	w.views = map[string]topology.SiteView{
		"a": {Name: "a", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-10"), ServerID: "0-1"},
		"b": {Name: "b", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"), Replication: replicating},
		"c": {Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-8,0-3:1-3"), ServerID: "0-3"},
	}
	w.l = w.loop()
	return w
}

// loop is a fresh operator process: nothing carried over but the API server.
func (w *recloneWorld) loop() *Loop {
	m := NewMetrics(nil)
	env := &Env{Metrics: m, Notifier: NewNotifier(w.ev, m), Log: logr.Discard(), Client: w.cl, Reader: w.cl,
		Clock: clockAt(func() time.Time { return t0 }), Recloner: w.rec}
	return &Loop{env: env, log: logr.Discard(), key: types.NamespacedName{Namespace: "shop", Name: "orders"},
		patcher: &statusPatcher{c: w.cl, reader: w.cl}, observedAt: t0, interval: time.Second, stopper: w}
}

// StopReplication plays the operator's SQL stop on a site: it fails on an
// unreachable site, and stops a reachable one's threads.
func (w *recloneWorld) StopReplication(_ context.Context, site string) error {
	w.stops++
	v := w.views[site]
	if v.State == v1alpha1.StateUnreachable {
		return errors.New(site + " unreachable")
	}
	v.Replication.Running = false
	w.views[site] = v
	return nil
}

func (w *recloneWorld) annotate(value string) {
	g := readGroup(w.t, w.cl)
	if g.Annotations == nil {
		g.Annotations = map[string]string{}
	}
	g.Annotations[v1alpha1.RecloneSiteAnnotation] = value
	if err := w.cl.Update(w.t.Context(), g); err != nil {
		w.t.Fatal(err)
	}
}

func (w *recloneWorld) edit(f func(st *v1alpha1.MysqlFailoverGroupStatus)) {
	g := readGroup(w.t, w.cl)
	f(&g.Status)
	if err := w.cl.Status().Update(w.t.Context(), g); err != nil {
		w.t.Fatal(err)
	}
}

// input is the pass's Input as buildPass makes it, before Judge.
func (w *recloneWorld) input(g *v1alpha1.MysqlFailoverGroup) topology.Input {
	in := topology.Input{ActiveSite: g.Status.ActiveSite, Generation: g.Status.TopologyGeneration, Now: t0,
		InFlight: failover.InFlight(&g.Status), PlannedInFlight: failover.PlannedInFlight(&g.Status),
		Cooldown: time.Minute, MaxLag: 10 * time.Second}
	for _, s := range g.Spec.Sites {
		v := w.views[s.Name]
		v.Diverged = failover.SiteStatusOf(&g.Status, s.Name).DivergentGtid != ""
		in.Sites = append(in.Sites, v)
	}
	holdRecloning(g, in)
	return topology.Judge(in)
}

// pass is one pass of the loop as far as reclones go: Decide on the
// group, then the reclone step.
func (w *recloneWorld) pass() {
	w.t.Helper()
	g := readGroup(w.t, w.cl)
	w.l.patcher.reset(g)
	in := w.input(g)
	d, err := topology.Decide(in)
	if err != nil {
		w.t.Fatal(err)
	}
	w.decisions = append(w.decisions, d)
	w.l.reclone(w.t.Context(), failover.Pass{Group: g, Input: in, Decision: d})
	w.phases = append(w.phases, w.recovery().Phase)
}

func (w *recloneWorld) recovery() v1alpha1.SiteRecovery {
	r := failover.SiteStatusOf(&readGroup(w.t, w.cl).Status, "c").Recovery
	if r == nil {
		return v1alpha1.SiteRecovery{}
	}
	return *r
}

func (w *recloneWorld) events() []string {
	var out []string
	for {
		select {
		case e := <-w.ev.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// assertNeverWriter: no decision of any pass makes c writable nor fails
// over to it, and Decide saw it held.
func (w *recloneWorld) assertNeverWriter() {
	w.t.Helper()
	for i, d := range w.decisions {
		if d.Target == "c" && d.Kind != topology.KindFailoverBlocked {
			w.t.Fatalf("pass %d: decision %s targets c while it is recloned", i, d.String())
		}
	}
}

// compact drops repeats: the phases status went through.
func compact(ph []v1alpha1.RecoveryPhase) []v1alpha1.RecoveryPhase {
	return slices.Compact(slices.Clone(ph))
}

// TestRecloneRunsItsPhases: a diverged site asked for with its prefix goes
// through every phase, each in status before its work, and rejoins.
func TestRecloneRunsItsPhases(t *testing.T) {
	w := newRecloneWorld(t)
	w.rec.onDone = func(phase v1alpha1.RecoveryPhase) {
		if phase == v1alpha1.RecoveryCloning { // mysqld restarted on the clone, replicating from a
			w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly,
				Executed: mustSet(t, "0-1:1-10"), Replication: topology.Replication{Running: true}}
		}
	}
	w.annotate("c:0-3:1-3")
	for range 12 {
		w.pass()
	}
	want := []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData,
		v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp, v1alpha1.RecoveryRejoined}
	if got := compact(w.phases); !slices.Equal(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	g := readGroup(t, w.cl)
	if _, ok := g.Annotations[v1alpha1.RecloneSiteAnnotation]; ok {
		t.Fatal("the request was not removed")
	}
	r := w.recovery()
	c := failover.SiteStatusOf(&g.Status, "c")
	switch {
	case r.Donor != "b" || r.DivergentGtid != cDivergent || r.Request != "c:0-3:1-3":
		t.Fatalf("recovery %+v", r)
	case r.PreservedAt == "" || r.CatchUpGtid != "0-1:1-10" || r.CompletionTime == nil:
		t.Fatalf("recovery %+v", r)
	case c.DivergentGtid != "":
		t.Fatalf("divergentGtid %q kept after the rejoin", c.DivergentGtid)
	case len(w.rec.request) != 1:
		t.Fatalf("the sidecar saw requests %v, want one identity for the whole reclone", w.rec.request)
	}
	if n := testutil.ToFloat64(w.l.env.Metrics.Reclones.WithLabelValues("shop", "orders", recloneRejoined)); n != 1 {
		t.Fatalf("bloodraven_reclone_operations_total{result=rejoined} = %v", n)
	}
	evs := strings.Join(w.events(), "\n")
	for _, e := range []string{"Normal RecloneRequested", "Normal ReclonePhase c: PreservingData",
		"Normal ReclonePhase c: Cloning", "Normal ReclonePhase c: CatchingUp", "Normal RecloneRejoined"} {
		if !strings.Contains(evs, e) {
			t.Errorf("no %q in events:\n%s", e, evs)
		}
	}
	w.assertNeverWriter()
}

// TestRecloneOfASiteNotDiverged: nothing diverged to save, but its
// sidecar still runs PreservingData (it accepts Cloning only after it),
// and the folder its whole datadir goes to is recorded in status.
func TestRecloneOfASiteNotDiverged(t *testing.T) {
	w := newRecloneWorld(t)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) { failover.SiteRecord(st, "c").DivergentGtid = "" })
	w.views["c"] = w.views["b"]
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
		Replication: topology.Replication{Running: true}}
	w.rec.onDone = func(phase v1alpha1.RecoveryPhase) {
		if phase == v1alpha1.RecoveryCloning { // the clone joins, replicating again
			c := w.views["c"]
			c.Replication.Running = true
			w.views["c"] = c
		}
	}
	w.annotate("c:confirm=orders")
	for range 14 { // each sidecar phase takes two asks; c's stop is observed before it is judged
		w.pass()
	}
	if w.rec.asked[v1alpha1.RecoveryPreservingData] == 0 {
		t.Fatal("PreservingData never asked: the sidecar would refuse Cloning")
	}
	if got := w.recovery(); got.Phase != v1alpha1.RecoveryRejoined || got.PreservedAt == "" {
		t.Fatalf("recovery %+v", got)
	}
}

// TestRecloneRefusals: every refused request ends in
// status.lastRecloneRejection and a Warning Event, is removed, and nothing
// is asked of any site nor recorded as a reclone.
func TestRecloneRefusals(t *testing.T) {
	cases := []struct {
		name   string
		value  string
		setup  func(w *recloneWorld)
		reason string
	}{
		{"malformed", "c", nil, v1alpha1.ReasonInvalidRequest},
		{"unknown site", "z:confirm=orders", nil, v1alpha1.ReasonUnknownSite},
		{"the active site", "a:confirm=orders", nil, v1alpha1.ReasonRecloneActiveSite},
		{"wrong prefix", "c:0-3:1-4", nil, v1alpha1.ReasonRecloneWrongPrefix},
		{"confirm for a diverged site", "c:confirm=orders", nil, v1alpha1.ReasonRecloneWrongPrefix},
		{"confirm names another group", "b:confirm=carts", nil, v1alpha1.ReasonRecloneWrongPrefix},
		{"an emergency failover in flight", "c:0-3:1-3", func(w *recloneWorld) {
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				st.Failover = &v1alpha1.FailoverIntent{From: "b", To: "a", Generation: 4, Step: v1alpha1.StepPromoting}
			})
		}, v1alpha1.ReasonConcurrentOperation},
		{"a planned failover in flight", "c:0-3:1-3", func(w *recloneWorld) {
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				st.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Target: "b", Phase: v1alpha1.PhaseDraining}
			})
		}, v1alpha1.ReasonConcurrentOperation},
		{"another reclone runs", "c:0-3:1-3", func(w *recloneWorld) {
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				failover.SiteRecord(st, "b").Recovery = &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryCloning, Donor: "a"}
			})
			w.rec.err = errors.New("b's sidecar is busy") // b's reclone stays where it is
		}, v1alpha1.ReasonConcurrentOperation},
		{"no healthy donor", "c:0-3:1-3", func(w *recloneWorld) {
			b := w.views["b"]
			b.State = v1alpha1.StateUnreachable
			w.views["b"] = b
			a := w.views["a"]
			a.Stale = true
			w.views["a"] = a
		}, v1alpha1.ReasonRecloneNoDonor},
		{"no reclone executor", "c:0-3:1-3", func(w *recloneWorld) { w.l.env.Recloner = nil }, v1alpha1.ReasonRecloneUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newRecloneWorld(t)
			if c.setup != nil {
				c.setup(w)
			}
			w.annotate(c.value)
			w.pass()
			g := readGroup(t, w.cl)
			rej := g.Status.LastRecloneRejection
			if rej == nil || rej.Reason != c.reason || rej.Request != c.value || rej.Message == "" {
				t.Fatalf("lastRecloneRejection %+v, want reason %s", rej, c.reason)
			}
			if _, ok := g.Annotations[v1alpha1.RecloneSiteAnnotation]; ok {
				t.Fatal("refused request not removed")
			}
			if r := failover.SiteStatusOf(&g.Status, "c").Recovery; r != nil {
				t.Fatalf("a refused request left a reclone: %+v", r)
			}
			if w.rec.asked[v1alpha1.RecoveryPreservingData]+w.rec.asked[v1alpha1.RecoveryCloning] != 0 {
				t.Fatalf("a site was asked to work: %v", w.rec.asked)
			}
			if n := testutil.ToFloat64(w.l.env.Metrics.Reclones.WithLabelValues("shop", "orders", recloneRejected)); n != 1 {
				t.Fatalf("bloodraven_reclone_operations_total{result=rejected} = %v", n)
			}
			evs := w.events()
			if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning RecloneRejected") || !strings.Contains(evs[0], c.reason) {
				t.Fatalf("events %q", evs)
			}
		})
	}
}

// TestRecloneRequestWaitsForThePassAct: a request is not judged on an
// Input the pass's act made stale (the act just failed over to c); the
// next pass judges it, on what the act did.
func TestRecloneRequestWaitsForThePassAct(t *testing.T) {
	w := newRecloneWorld(t)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) { failover.SiteRecord(st, "c").DivergentGtid = "" })
	w.annotate("c:confirm=orders")
	g := readGroup(t, w.cl)
	w.l.patcher.reset(g)
	in := w.input(g)
	// The act of this pass began an emergency failover to c.
	g.Status.ActiveSite, g.Status.TopologyGeneration = "c", 5
	g.Status.Failover = &v1alpha1.FailoverIntent{From: "a", To: "c", Generation: 5, Step: v1alpha1.StepFencing}
	if err := w.l.patcher.PersistStatus(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	w.l.reclone(t.Context(), failover.Pass{Group: g, Input: in})
	g = readGroup(t, w.cl)
	if g.Annotations[v1alpha1.RecloneSiteAnnotation] == "" || g.Status.LastRecloneRejection != nil ||
		failover.SiteStatusOf(&g.Status, "c").Recovery != nil {
		t.Fatalf("judged on a stale Input: %+v", g.Status)
	}
	w.pass() // the next pass sees c active
	if rej := readGroup(t, w.cl).Status.LastRecloneRejection; rej == nil || rej.Reason != v1alpha1.ReasonRecloneActiveSite {
		t.Fatalf("lastRecloneRejection %+v, want ActiveSite", rej)
	}
}

// TestRecloningSiteIsPromotedOnlyBeforeCloning: while c is recloned, the
// active site is lost; c holds the most of it (a commit b lacks, which c
// may have acknowledged alone). From Cloning on c's data may be partly
// replaced: it is never the target, the failover goes to b, or waits
// when b is gone too. Before Cloning c's data is whole: it is promoted
// like any replica, and the failover's intent stops the reclone without
// holding c.
func TestRecloningSiteIsPromotedOnlyBeforeCloning(t *testing.T) {
	for _, phase := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData,
		v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp} {
		held := phase == v1alpha1.RecoveryCloning || phase == v1alpha1.RecoveryCatchingUp
		for _, bUp := range []bool{true, false} {
			t.Run(string(phase)+map[bool]string{true: " b up", false: " b down"}[bUp], func(t *testing.T) {
				w := newRecloneWorld(t)
				w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
					c := failover.SiteRecord(st, "c")
					c.DivergentGtid = ""
					c.Recovery = &v1alpha1.SiteRecovery{Phase: phase, Donor: "b", Request: "c:confirm=orders",
						StartTime: ptrTime(t0), CatchUpGtid: "0-1:1-10"}
				})
				w.rec.err = errors.New("c's sidecar does not answer")
				w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateUnreachable, FenceConfirmed: true}
				w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-9"),
					Replication: topology.Replication{Running: true}}
				if !bUp {
					w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateUnreachable, FenceConfirmed: true}
				}
				w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
					Replication: topology.Replication{Running: true}}
				w.pass()
				d := w.decisions[0]
				if !held {
					if d.Kind != topology.KindFailover || d.Target != "c" {
						t.Fatalf("decision %s, want a failover to c, which holds the most", d.String())
					}
					w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
						st.ActiveSite, st.TopologyGeneration = "c", 5
						st.Failover = &v1alpha1.FailoverIntent{From: "a", To: "c", Generation: 5, Step: v1alpha1.StepFencing}
					})
					w.pass()
					if r := w.recovery(); r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneActiveSite || r.Holds() {
						t.Fatalf("the reclone of the promoted c: %+v", r)
					}
					return
				}
				w.assertNeverWriter()
				if bUp && (d.Kind != topology.KindFailover || d.Target != "b") {
					t.Fatalf("decision %s, want a failover to b", d.String())
				}
				if !bUp && d.Kind != topology.KindFailoverBlocked {
					t.Fatalf("decision %s, want blocked", d.String())
				}
				if w.recovery().Phase != phase {
					t.Fatalf("phase moved to %s", w.recovery().Phase)
				}
			})
		}
	}
}

func ptrTime(t time.Time) *metav1.Time { v := stamp(t); return &v }
