package controller

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/grouploop"
)

func TestStallLimit(t *testing.T) {
	salvage2m := failover.Settings{SalvageTimeout: 2 * time.Minute}.PassBudget()
	cases := []struct {
		name             string
		opts             Options
		interval, budget time.Duration
		want             time.Duration
	}{
		{"defaults before a pass", Options{}, 0, 0, 6*time.Second + failover.Settings{}.PassBudget()},
		{"the group's budget, 2 s poll", Options{}, 2 * time.Second, 100 * time.Second, 106 * time.Second},
		{"short timings before a pass", Options{DrainTimeout: 2 * time.Second, CallTimeout: time.Second}, 250 * time.Millisecond, 0,
			750*time.Millisecond + failover.Settings{DrainTimeout: 2 * time.Second, CallTimeout: time.Second}.PassBudget()},
		// Review of issue 24: a salvageTimeout of 2 min is spent in one
		// pass; a fixed limit of 66 s killed the operator inside it, and the
		// restarted process salvaged again with a fresh budget.
		{"a 2 min salvage fits", Options{}, 2 * time.Second, salvage2m, 6*time.Second + salvage2m},
		{"set explicitly", Options{StallTimeout: 20 * time.Second}, 10 * time.Second, salvage2m, 20 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := StallLimit(c.opts, c.interval, c.budget); got != c.want {
				t.Fatalf("StallLimit = %s, want %s", got, c.want)
			}
		})
	}
	if salvage2m <= 2*time.Minute {
		t.Fatalf("a pass budget of %s does not hold a 2 min salvage", salvage2m)
	}
}

// newTestOperator is an Operator on a fake clock and a fake API server
// holding groups, never started unless the test says.
func newTestOperator(t *testing.T, groups ...string) (*Operator, *clocktesting.FakeClock) {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	for _, g := range groups {
		obj := &v1alpha1.MysqlFailoverGroup{}
		obj.Namespace, obj.Name = "db", g
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	o, err := New(Deps{Client: c, Reader: c, Resolver: grouploop.ServiceResolver{}, Clock: clk}, Options{NudgeTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	return o, clk
}

func TestReadyNeedsLeadershipAndEveryGroup(t *testing.T) {
	o, _ := newTestOperator(t, "orders", "users")
	ctx := t.Context()
	if err := o.Ready(ctx); !errors.Is(err, ErrNotLeading) {
		t.Fatalf("before Start: %v, want ErrNotLeading", err)
	}
	close(o.started) // elected: the manager called Start
	if err := o.Ready(ctx); !errors.Is(err, ErrGroupsNotLoaded) {
		t.Fatalf("no group read: %v, want ErrGroupsNotLoaded", err)
	}
	o.Registry().Know(types.NamespacedName{Namespace: "db", Name: "orders"}, []string{"a"})
	if err := o.Ready(ctx); !errors.Is(err, ErrGroupsNotLoaded) {
		t.Fatalf("one of two groups read: %v, want ErrGroupsNotLoaded", err)
	}
	o.Registry().Know(types.NamespacedName{Namespace: "db", Name: "users"}, []string{"a"})
	if err := o.Ready(ctx); err != nil {
		t.Fatalf("every group read: %v", err)
	}
	// Latched: a group created later does not take the leader out of the Service.
	obj := &v1alpha1.MysqlFailoverGroup{}
	obj.Namespace, obj.Name = "db", "later"
	if err := o.client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := o.Ready(ctx); err != nil {
		t.Fatalf("a later group: %v", err)
	}
}

func TestHealthyWatchesEachRunningLoop(t *testing.T) {
	o, clk := newTestOperator(t)
	key := types.NamespacedName{Namespace: "db", Name: "orders"}
	h := &loopHandle{done: make(chan struct{}), lastPass: clk.Now()}
	o.loops[key] = h
	const budget = 40 * time.Second
	limit := StallLimit(o.opts, time.Second, budget)
	steps := []struct {
		name    string
		advance time.Duration
		pass    bool
		ended   bool
		healthy bool
	}{
		{"just started", 0, false, false, true},
		{"first pass", time.Second, true, false, true},
		{"at the limit", limit, false, false, true},
		{"past the limit", time.Second, false, false, false},
		{"passes again", 0, true, false, true},
		{"stalls again", limit + time.Second, false, false, false},
		{"ended loops do not count", 0, false, true, true},
	}
	for _, s := range steps {
		clk.Step(s.advance)
		if s.pass {
			o.budgeted(key, budget)
			o.passed(key, time.Second)
		}
		if s.ended {
			close(h.done)
		}
		err := o.Healthy()
		if s.healthy != (err == nil) || (err != nil && !errors.Is(err, ErrLoopStalled)) {
			t.Fatalf("%s: Healthy = %v, want healthy %v", s.name, err, s.healthy)
		}
	}
}

// TestHealthyJudgesAPassByItsOwnBudget (review of 419c5f2): the budget
// was reported only when a pass ended, so the first pass after a restart,
// which resumes a salvage with a fresh salvageTimeout, was judged by the
// default budget and the process was killed inside it again. The loop
// reports its budget before it acts.
func TestHealthyJudgesAPassByItsOwnBudget(t *testing.T) {
	o, clk := newTestOperator(t)
	key := types.NamespacedName{Namespace: "db", Name: "orders"}
	o.loops[key] = &loopHandle{done: make(chan struct{}), lastPass: clk.Now()}
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 4 * time.Minute}
	budget := failover.SettingsFor(g, failover.Settings{}).PassBudget()
	o.budgeted(key, budget) // the first pass, before it acts
	clk.Step(3 * time.Minute)
	if err := o.Healthy(); err != nil {
		t.Fatalf("3 min into a pass allowed a 4 min salvage: %v", err)
	}
	clk.Step(budget)
	if err := o.Healthy(); !errors.Is(err, ErrLoopStalled) {
		t.Fatalf("past the pass's own budget: %v, want ErrLoopStalled", err)
	}
}

// TestPassBudgetHoldsTheCacheTakeover: a planned failover's Dragonfly
// takeover waits up to maxSyncWait inside one pass.
func TestPassBudgetHoldsTheCacheTakeover(t *testing.T) {
	g := &v1alpha1.MysqlFailoverGroup{}
	without := failover.SettingsFor(g, failover.Settings{}).PassBudget()
	g.Spec.Dragonfly.Enabled = true
	g.Spec.Dragonfly.PlannedFailover.MaxSyncWait = metav1.Duration{Duration: 3 * time.Minute}
	if with := failover.SettingsFor(g, failover.Settings{}).PassBudget(); with-without != 3*time.Minute {
		t.Fatalf("budget %s with a 3 min maxSyncWait, %s without: want 3 min more", with, without)
	}
}
