//go:build envtest

package controller_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// fenceSites sets the fenced-sites annotation to value; nil removes it.
func (e *env) fenceSites(value *string) {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{v1alpha1.FencedSitesAnnotation: value}}})
	if err != nil {
		e.t.Fatal(err)
	}
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "orders"}}
	if err := cp.Client.Patch(e.t.Context(), g, client.RawPatch(types.MergePatchType, body)); err != nil {
		e.t.Fatalf("annotate fenced-sites: %v", err)
	}
}

func condIs(g *v1alpha1.MysqlFailoverGroup, typ string, status metav1.ConditionStatus, reason string) bool {
	c := metaCondition(g, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

// With three sites, the primary killed and the second site admin-fenced,
// the third is promoted; the fenced one stays read-only.
func TestAdminFencedReplicaSkippedForTheNext(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	e.fenceSites(new("b"))
	e.eventually(10*time.Second, "b shown fenced", func() bool { return site(e.get(), "b").Fenced })
	e.db.Kill(0)
	e.eventually(20*time.Second, "c writable", func() bool { return e.writable("c") })
	e.eventually(10*time.Second, "failover to c recorded", func() bool {
		g := e.get()
		return g.Status.LastFailover != nil && g.Status.Failover == nil
	})
	g := e.get()
	if g.Status.ActiveSite != "c" || g.Status.LastFailover.To != "c" || e.writable("b") {
		t.Fatalf("after the kill: active %s, last failover %+v, b writable %v", g.Status.ActiveSite,
			g.Status.LastFailover, e.writable("b"))
	}
}

// With two sites and the replica admin-fenced, killing the primary promotes
// nothing: FailoverBlocked/NoEligibleCandidate.
func TestAdminFencedReplicaNoCandidate(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.fenceSites(new("b"))
	e.eventually(10*time.Second, "b shown fenced", func() bool { return site(e.get(), "b").Fenced })
	e.db.Kill(0)
	e.eventually(20*time.Second, "failover blocked", func() bool {
		return condIs(e.get(), v1alpha1.ConditionFailoverBlocked, metav1.ConditionTrue, v1alpha1.ReasonNoCandidate)
	})
	time.Sleep(detection + 2*peerCheckInterval)
	g := e.get()
	if e.writable("b") || g.Status.ActiveSite != "a" || g.Status.TopologyGeneration != 1 || g.Status.Failover != nil {
		t.Fatalf("fenced b promoted: writable %v, status %+v", e.writable("b"), g.Status)
	}
}

// Fencing the active site freezes the group: it is made read-only, the
// group is not Ready (AdminFenced), nobody is promoted; removing the
// annotation re-asserts it. Unknown names are ignored with a warning.
func TestAdminFencedActiveFreezesAndResumes(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.fenceSites(new("a,nowhere"))
	e.eventually(10*time.Second, "a read-only and the group not Ready", func() bool {
		g := e.get()
		return !e.writable("a") && site(g, "a").Fenced &&
			condIs(g, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonAdminFenced) &&
			condIs(g, v1alpha1.ConditionFailoverBlocked, metav1.ConditionTrue, v1alpha1.ReasonAdminFenced)
	})
	for _, reason := range []string{v1alpha1.EventAdminFenced, v1alpha1.EventFencedSitesIgnored} {
		e.eventually(5*time.Second, "event "+reason, func() bool { return len(e.events(reason)) > 0 })
	}
	if ev := e.events(v1alpha1.EventFencedSitesIgnored)[0]; !strings.Contains(ev.Note, `"nowhere"`) {
		t.Errorf("ignored-entries event says %q, want it to name \"nowhere\"", ev.Note)
	}
	time.Sleep(detection + 2*peerCheckInterval)
	g := e.get()
	if e.writable("a") || e.writable("b") || g.Status.ActiveSite != "a" || g.Status.TopologyGeneration != 1 {
		t.Fatalf("frozen group changed: a writable %v, b writable %v, status %+v", e.writable("a"), e.writable("b"), g.Status)
	}
	e.fenceSites(nil)
	e.healthy()
	if !e.writable("a") || e.writable("b") || e.get().Status.TopologyGeneration != 1 {
		t.Fatalf("after unfencing: a writable %v, b writable %v", e.writable("a"), e.writable("b"))
	}
}
