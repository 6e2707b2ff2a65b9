//go:build envtest

package controller_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// The reconciler renders every object (pkg/routing's tests cover their
// detail), never rewrites them when nothing changed, and the first start
// makes the first primary-candidate active at generation 1.
func TestFirstStartRendersObjects(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.healthy()
	g := e.get()
	if g.Status.TopologyGeneration != 1 || site(g, "b").State != v1alpha1.StateReadOnly || !site(g, "b").Replicating {
		t.Fatalf("first start: %+v", g.Status)
	}
	ctx := t.Context()
	e.eventually(20*time.Second, "objects converged", func() bool {
		for _, name := range []string{routing.SiteName("orders", "a"), routing.SiteName("orders", "b")} {
			var d appsv1.Deployment
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &d); err != nil {
				return false
			}
			if len(d.OwnerReferences) != 1 || d.OwnerReferences[0].Name != "orders" {
				t.Fatalf("deployment %s owners %+v", name, d.OwnerReferences)
			}
		}
		for _, name := range []string{routing.PrimaryServiceName("orders"), routing.ReplicasServiceName("orders"),
			routing.SiteName("orders", "a"), routing.SiteName("orders", "b")} {
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &corev1.Service{}); err != nil {
				return false
			}
		}
		return true
	})
	e.eventually(10*time.Second, "DNS and role labels on a", func() bool {
		target, ip := e.dnsTarget("a")
		return target != "" && target == ip && e.podRole("a") == v1alpha1.RolePrimary && e.podRole("b") == v1alpha1.RoleReplica
	})
	// Converging again with nothing changed writes nothing.
	var before appsv1.Deployment
	key := client.ObjectKey{Namespace: e.ns, Name: routing.SiteName("orders", "a")}
	_ = cp.Client.Get(ctx, key, &before)
	g.Annotations = map[string]string{"touch": "1"}
	if err := cp.Client.Update(ctx, g); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	var after appsv1.Deployment
	_ = cp.Client.Get(ctx, key, &after)
	if before.ResourceVersion != after.ResourceVersion {
		t.Fatalf("deployment rewritten without a change: %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}
	// /active-site serves the persisted view.
	resp, err := http.Get(e.api.URL + v1alpha1.PathActiveSite + "?namespace=" + e.ns + "&group=orders")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var v v1alpha1.ActiveSiteView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.ActiveSite != "a" || v.Generation != 1 {
		t.Fatalf("/active-site: %+v %v", v, err)
	}
}

// Killing the primary's mysqld moves writes, Services and DNS to the replica
// within the detection window plus one second.
func TestPrimaryKilledFailsOver(t *testing.T) {
	e := newEnv(t, "a", "b")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-node-a", Labels: map[string]string{"pool": e.ns + "-a"}}}
	if err := cp.Client.Create(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	e.createGroup(func(spec map[string]any) {
		spec["sites"].([]any)[0].(map[string]any)["taintNodeSelector"] = map[string]any{"pool": e.ns + "-a"}
	})
	run := e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.db.Kill(0)
	took := e.eventually(20*time.Second, "b writable", func() bool { return e.writable("b") })
	t.Logf("b writable %s after the kill (detection window %s)", took, detection)
	if limit := detection + time.Second + loadAllowance; took > limit {
		t.Errorf("b writable after %s, want within %s", took, limit)
	}
	e.eventually(10*time.Second, "failover recorded", func() bool {
		g := e.get()
		return g.Status.LastFailover != nil && g.Status.Failover == nil
	})
	g := e.get()
	if g.Status.ActiveSite != "b" || g.Status.TopologyGeneration != 2 || g.Status.LastFailover.From != "a" ||
		g.Status.LastFailover.Kind != v1alpha1.KindEmergency {
		t.Fatalf("status after failover: %+v", g.Status)
	}
	e.eventually(5*time.Second, "routing flipped", func() bool {
		target, ip := e.dnsTarget("b")
		return target == ip && e.podRole("b") == v1alpha1.RolePrimary && e.podRole("a") == v1alpha1.RoleReplica
	})
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(node), node); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(node.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == v1alpha1.TaintLostPrimary }) {
		t.Errorf("losing site's node taints %+v, want %s", node.Spec.Taints, v1alpha1.TaintLostPrimary)
	}
	for _, reason := range []string{v1alpha1.EventFailoverStarted, v1alpha1.EventFailoverExecuted, v1alpha1.EventDNSFlipped} {
		e.eventually(5*time.Second, "event "+reason, func() bool { return len(e.events(reason)) > 0 })
	}
	m := run.op.Metrics()
	if n := e.counter(m.Failovers, e.ns, "orders", string(v1alpha1.KindEmergency)); n != 1 {
		t.Errorf("bloodraven_failovers_total = %v, want 1", n)
	}
	if n := e.counter(m.DNSFlips, e.ns, "orders"); n != 1 {
		t.Errorf("bloodraven_dns_flips_total = %v, want 1", n)
	}
}

// loadAllowance absorbs scheduling delays on the shared two-core machine.
const loadAllowance = 500 * time.Millisecond

// Losing the replica is no reason to fail over: the group is Degraded.
func TestReplicaLostDegrades(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.healthy()
	e.db.Kill(1)
	e.eventually(10*time.Second, "Degraded/PeerDown", func() bool {
		c := metaCondition(e.get(), v1alpha1.ConditionDegraded)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonPeerDown
	})
	time.Sleep(time.Second)
	g := e.get()
	if g.Status.ActiveSite != "a" || g.Status.TopologyGeneration != 1 || g.Status.Failover != nil ||
		site(g, "b").State != v1alpha1.StateUnreachable || !e.writable("a") {
		t.Fatalf("after the replica was lost: %+v", g.Status)
	}
	if len(e.events(v1alpha1.EventFailoverStarted)) != 0 {
		t.Fatal("a failover started")
	}
}

// A second primary loss within failoverCooldown is not failed over: the
// group says FailoverBlocked/Cooldown and records an Event.
func TestCooldownBlocksSecondFailover(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.db.Kill(0)
	e.eventually(20*time.Second, "first failover", func() bool {
		g := e.get()
		return g.Status.LastFailover != nil && g.Status.Failover == nil
	})
	if err := e.db.Start(0); err != nil {
		t.Fatal(err)
	}
	e.eventually(20*time.Second, "a replicates from b", func() bool {
		s := site(e.get(), "a")
		return s.State == v1alpha1.StateReadOnly && s.Replicating
	})
	e.db.Kill(1)
	e.eventually(10*time.Second, "FailoverBlocked/Cooldown", func() bool {
		c := metaCondition(e.get(), v1alpha1.ConditionFailoverBlocked)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonCooldown
	})
	e.eventually(5*time.Second, "FailoverBlocked event", func() bool {
		for _, ev := range e.events(v1alpha1.EventFailoverBlocked) {
			if strings.Contains(ev.Note, v1alpha1.ReasonCooldown) {
				return true
			}
		}
		return false
	})
	time.Sleep(time.Second)
	if g := e.get(); g.Status.TopologyGeneration != 2 || g.Status.ActiveSite != "b" || e.writable("a") {
		t.Fatalf("second failover happened: %+v", g.Status)
	}
}

// A primary that is unreachable and unconfirmed (no sidecar report, no SQL
// fence) is promoted over only after its lease deadline.
func TestUnconfirmedPrimaryWaitsForLease(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("b")
	e.healthy()
	e.db.Kill(0)
	e.eventually(10*time.Second, "intent persisted", func() bool { return e.get().Status.TopologyGeneration == 2 })
	intent := time.Now()
	lease := leaseTimeout + peerCheckInterval
	for time.Since(intent) < lease-200*time.Millisecond {
		if e.writable("b") {
			t.Fatalf("b writable %s after the intent, before the lease deadline (%s)", time.Since(intent), lease)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := e.eventually(10*time.Second, "b writable", func() bool { return e.writable("b") })
	t.Logf("b writable %s after the intent (lease %s)", time.Since(intent), lease)
	_ = took
	e.eventually(5*time.Second, "confirmed by lease", func() bool {
		for _, ev := range e.events(v1alpha1.EventFailoverExecuted) {
			if strings.Contains(ev.Note, "lease-deadline") {
				return true
			}
		}
		return false
	})
}

// An operator restarted after persisting its intent finishes the failover,
// with exactly one writable site and one generation bump.
func TestRestartCompletesFailover(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	first := e.startOperator()
	e.startSidecars("b")
	e.healthy()
	e.db.Kill(0)
	e.eventually(10*time.Second, "intent persisted", func() bool {
		f := e.get().Status.Failover
		return f != nil && f.Step == v1alpha1.StepFencing
	})
	first.stop()
	if e.writable("b") {
		t.Fatal("b writable before the restart")
	}
	if err := e.db.Start(0); err != nil { // a comes back, fenced, while no operator runs
		t.Fatal(err)
	}
	e.startOperator()
	e.eventually(20*time.Second, "failover completed", func() bool {
		g := e.get()
		return g.Status.LastFailover != nil && g.Status.Failover == nil
	})
	e.eventually(20*time.Second, "a replicates from b", func() bool { return site(e.get(), "a").Replicating })
	g := e.get()
	if g.Status.ActiveSite != "b" || g.Status.TopologyGeneration != 2 || !e.writable("b") || e.writable("a") {
		t.Fatalf("after the restart: %+v (a writable %v, b writable %v)", g.Status, e.writable("a"), e.writable("b"))
	}
}

// A blackholed primary does not stall the poll loop: the other site is still
// probed every pass and the failover goes through.
func TestBlackholedPrimaryDoesNotStallTheLoop(t *testing.T) {
	e := newEnv(t, "a", "b")
	p := e.proxy("a")
	e.createGroup(nil)
	run := e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	before := probes(t, run, e.ns, "b")
	e.blackhole(p)
	start := time.Now()
	e.eventually(5*time.Second, "a unreachable", func() bool { return site(e.get(), "a").State == v1alpha1.StateUnreachable })
	t.Logf("a unreachable %s after the blackhole", time.Since(start))
	e.eventually(15*time.Second, "b writable", func() bool { return e.writable("b") })
	elapsed := time.Since(start)
	got := probes(t, run, e.ns, "b") - before
	// Each pass costs at most pollInterval plus one probe deadline (pollInterval).
	if want := uint64(elapsed / (2*pollInterval + loadAllowance/2)); got < want {
		t.Errorf("b probed %d times in %s while a was blackholed, want at least %d", got, elapsed, want)
	}
	if e.writable("a") {
		t.Error("a still writable: its sidecar should have fenced it by view")
	}
	if g := e.get(); g.Status.ActiveSite != "b" || g.Status.TopologyGeneration != 2 {
		t.Fatalf("after the failover: %+v", g.Status)
	}
}

// probes is how many times the operator probed a site.
func probes(t *testing.T, run *operatorRun, ns, site string) uint64 {
	t.Helper()
	mfs, err := run.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "bloodraven_poll_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["site"] == site {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

// Two sites made writable by hand: every site but the authority is fenced
// within one poll.
func TestTwoWritersFencedWithinOnePoll(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.healthy()
	e.rootExec("b", "SET GLOBAL read_only=OFF")
	took := e.eventually(10*time.Second, "b fenced", func() bool { return !e.writable("b") })
	t.Logf("b fenced %s after it was made writable", took)
	if limit := 2*pollInterval + loadAllowance; took > limit {
		t.Errorf("b fenced after %s, want within one poll (%s with allowance)", took, limit)
	}
	if !e.writable("a") {
		t.Fatal("the authority a was fenced")
	}
	e.eventually(5*time.Second, "ExtraWriterFenced event", func() bool {
		return len(e.events(v1alpha1.EventExtraWriterFenced)) > 0
	})
	if g := e.get(); g.Status.TopologyGeneration != 1 || g.Status.ActiveSite != "a" {
		t.Fatalf("topology changed: %+v", g.Status)
	}
	_ = context.Background
}
