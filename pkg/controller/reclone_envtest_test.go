//go:build envtest

package controller_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/grouploop"
)

// stepRecloner stands in for the sites' sidecars (their reclone endpoint
// is not built): each phase is done when asked, except Cloning while held.
// The data is left as it is, so the site under reclone, a healthy replica,
// catches up at once.
type stepRecloner struct {
	mu    sync.Mutex
	hold  bool
	asked map[v1alpha1.RecoveryPhase]int
	sites map[string]bool
}

func newStepRecloner(hold bool) *stepRecloner {
	return &stepRecloner{hold: hold, asked: map[v1alpha1.RecoveryPhase]int{}, sites: map[string]bool{}}
}

func (s *stepRecloner) Run(_ context.Context, _ types.NamespacedName, site string, step grouploop.RecloneStep) (grouploop.RecloneProgress, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked[step.Phase]++
	s.sites[site] = true
	if step.Phase == v1alpha1.RecoveryCloning && s.hold {
		return grouploop.RecloneProgress{}, nil
	}
	return grouploop.RecloneProgress{Done: true, PreservedAt: "test"}, nil
}

func (s *stepRecloner) count(p v1alpha1.RecoveryPhase) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[p]
}

func (e *env) askReclone(value string) {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{v1alpha1.RecloneSiteAnnotation: value}}})
	if err != nil {
		e.t.Fatal(err)
	}
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orders"}}
	if err := cp.Client.Patch(e.t.Context(), g, client.RawPatch(types.MergePatchType, body)); err != nil {
		e.t.Fatalf("annotate reclone-site: %v", err)
	}
}

// refused waits for value's refusal with reason, and its removal.
func (e *env) refused(value, reason string) {
	e.t.Helper()
	e.eventually(10*time.Second, "refusal of "+value, func() bool {
		g := e.get()
		r := g.Status.LastRecloneRejection
		_, asked := g.Annotations[v1alpha1.RecloneSiteAnnotation]
		return r != nil && r.Request == value && r.Reason == reason && !asked
	})
}

func recovery(g *v1alpha1.MysqlFailoverGroup, name string) v1alpha1.SiteRecovery {
	if r := site(g, name).Recovery; r != nil {
		return *r
	}
	return v1alpha1.SiteRecovery{}
}

// TestReclone: refusals of the active site and a wrong proof; an accepted
// reclone of c held in Cloning refuses a planned failover and a second
// reclone, and survives an operator restart, resumed from
// status, while the primary is killed: b is promoted, never c; once
// released, c rejoins. c is never writable.
func TestReclone(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	rec := newStepRecloner(true)
	withRecloner := func(r grouploop.Recloner) func(*controller.Deps, *controller.Options) {
		return func(d *controller.Deps, _ *controller.Options) { d.Recloner = r }
	}
	run := e.startOperatorWith(withRecloner(rec))
	e.startSidecars("a", "b", "c")
	e.healthy()
	e.rootExec("a", "CREATE DATABASE reclone_probe")

	e.askReclone("a:confirm=orders")
	e.refused("a:confirm=orders", v1alpha1.ReasonRecloneActiveSite)
	e.askReclone("c:0-1-1-12345")
	e.refused("c:0-1-1-12345", v1alpha1.ReasonRecloneWrongPrefix)
	if n := len(e.events(v1alpha1.EventRecloneRejected)); n < 2 {
		t.Fatalf("%d RecloneRejected events, want 2", n)
	}

	stopWatch := e.watchNeverWritable("c")
	e.askReclone("c:confirm=orders")
	e.eventually(15*time.Second, "c in Cloning", func() bool {
		return recovery(e.get(), "c").Phase == v1alpha1.RecoveryCloning && rec.count(v1alpha1.RecoveryCloning) > 0
	})
	if _, asked := e.get().Annotations[v1alpha1.RecloneSiteAnnotation]; asked {
		t.Fatal("accepted request not removed")
	}
	// A planned failover while c is recloned is refused, and so is a
	// second reclone; nothing moves.
	e.annotate("b")
	g := e.planned("b", v1alpha1.PhaseFailed, 15*time.Second)
	if b := g.Status.PlannedFailover; b.Reason != v1alpha1.ReasonConcurrentOperation || g.Status.ActiveSite != "a" || !e.writable("a") {
		t.Fatalf("planned failover during a reclone: %+v, active %s", b, g.Status.ActiveSite)
	}
	e.askReclone("b:confirm=orders")
	e.refused("b:confirm=orders", v1alpha1.ReasonConcurrentOperation)
	run.stop()

	// The primary dies while no operator runs and c is mid-clone.
	e.db.Kill(0)
	rec2 := newStepRecloner(true)
	e.startOperatorWith(withRecloner(rec2))
	e.eventually(30*time.Second, "b writable", func() bool { return e.writable("b") })
	e.eventually(10*time.Second, "failover to b recorded", func() bool {
		g := e.get()
		return g.Status.ActiveSite == "b" && g.Status.Failover == nil && g.Status.LastFailover != nil
	})
	if r := recovery(e.get(), "c"); r.Phase != v1alpha1.RecoveryCloning || rec2.count(v1alpha1.RecoveryPreservingData) != 0 {
		t.Fatalf("after the restart and failover: %+v, asked %v", r, rec2.asked)
	}
	rec2.mu.Lock()
	rec2.hold = false
	rec2.mu.Unlock()
	e.eventually(30*time.Second, "c rejoined", func() bool { return recovery(e.get(), "c").Phase == v1alpha1.RecoveryRejoined })
	if bad := stopWatch(); len(bad) > 0 {
		t.Fatalf("c writable during its reclone: %v", bad)
	}
	for _, reason := range []string{v1alpha1.EventRecloneRequested, v1alpha1.EventReclonePhase, v1alpha1.EventRecloneRejoined} {
		if len(e.events(reason)) == 0 {
			t.Errorf("no %s event", reason)
		}
	}
	if r := recovery(e.get(), "c"); r.Donor != "b" || r.CatchUpGtid == "" || !strings.Contains(r.Request, "confirm=orders") {
		t.Fatalf("recovery %+v", r)
	}
}

// watchNeverWritable samples site's read_only until the returned function
// is called, which returns when it was seen writable.
func (e *env) watchNeverWritable(name string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if e.writable(name) {
				mu.Lock()
				bad = append(bad, time.Now().Format(time.StampMilli))
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return bad
	}
}
