//go:build envtest

package controller_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestPrimaryFailingSinceAndProgressing: a lost primary whose failover is
// blocked is recorded failing since about the kill and the group is not
// Progressing; once the block lifts and the failover ends, the new
// primary is writable, primaryFailingSince is cleared and Progressing is
// false again (Idle).
func TestPrimaryFailingSinceAndProgressing(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	g := e.get()
	if g.Status.PrimaryFailingSince != nil || !condIs(g, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle) {
		t.Fatalf("healthy group: primaryFailingSince %v, conditions %+v", g.Status.PrimaryFailingSince, g.Status.Conditions)
	}
	e.fenceSites(new("b"))
	e.eventually(10*time.Second, "b shown fenced", func() bool { return site(e.get(), "b").Fenced })
	killed := time.Now()
	e.db.Kill(0)
	e.eventually(20*time.Second, "failover blocked with the primary failing", func() bool {
		g := e.get()
		return g.Status.PrimaryFailingSince != nil &&
			condIs(g, v1alpha1.ConditionFailoverBlocked, metav1.ConditionTrue, v1alpha1.ReasonNoCandidate)
	})
	g = e.get()
	if since := g.Status.PrimaryFailingSince.Time; since.Before(killed.Add(-time.Second)) || since.After(time.Now()) {
		t.Errorf("primaryFailingSince %s, want after the kill at %s", since, killed)
	}
	if !condIs(g, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle) {
		t.Errorf("a blocked failover shows Progressing: %+v", g.Status.Conditions)
	}
	first := *g.Status.PrimaryFailingSince
	time.Sleep(2 * pollInterval)
	if g := e.get(); g.Status.PrimaryFailingSince == nil || !g.Status.PrimaryFailingSince.Equal(&first) {
		t.Errorf("primaryFailingSince moved while the primary stayed down: %v -> %v", first, g.Status.PrimaryFailingSince)
	}
	e.fenceSites(nil)
	e.eventually(20*time.Second, "b writable", func() bool { return e.writable("b") })
	e.eventually(10*time.Second, "failover over, failing cleared, not progressing", func() bool {
		g := e.get()
		return g.Status.ActiveSite == "b" && g.Status.Failover == nil && g.Status.PrimaryFailingSince == nil &&
			condIs(g, v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonIdle)
	})
}
