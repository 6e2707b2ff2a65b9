package grouploop

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

func testLoop() *Loop {
	m := NewMetrics(nil)
	env := &Env{Metrics: m, Notifier: NewNotifier(nil, m), Log: logr.Discard(),
		Clock: clockAt(func() time.Time { return t0 })}
	return &Loop{env: env, log: logr.Discard()}
}

func TestConditions(t *testing.T) {
	type cond struct {
		status metav1.ConditionStatus
		reason string
	}
	cases := []struct {
		name                   string
		d                      topology.Decision
		inFlight               bool
		ready, degraded, block cond
	}{
		{"healthy", topology.Decision{Kind: topology.KindHealthy, Reason: v1alpha1.ReasonHealthy},
			false, cond{"True", v1alpha1.ReasonHealthy}, cond{"False", v1alpha1.ReasonHealthy}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"replica down", topology.Decision{Kind: topology.KindDegraded, Reason: v1alpha1.ReasonPeerDown},
			false, cond{"True", v1alpha1.ReasonHealthy}, cond{"True", v1alpha1.ReasonPeerDown}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"active site not observed yet", topology.Decision{Kind: topology.KindDegraded, Reason: v1alpha1.ReasonNotReady},
			false, cond{"False", v1alpha1.ReasonNotReady}, cond{"True", v1alpha1.ReasonNotReady}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"cooldown", topology.Decision{Kind: topology.KindFailoverBlocked, Reason: v1alpha1.ReasonCooldown, Wanted: topology.KindFailover},
			false, cond{"False", v1alpha1.ReasonCooldown}, cond{"True", v1alpha1.ReasonCooldown}, cond{"True", v1alpha1.ReasonCooldown}},
		{"failover waiting for the old primary's fence", topology.Decision{Kind: topology.KindFailoverBlocked,
			Reason: v1alpha1.ReasonFenceUnconfirmed, Wanted: topology.KindFailover, Target: "b"},
			true, cond{"False", v1alpha1.ReasonFailoverRunning}, cond{"True", v1alpha1.ReasonFenceUnconfirmed},
			cond{"True", v1alpha1.ReasonFenceUnconfirmed}},
		{"promoted, routing in flight", topology.Decision{Kind: topology.KindHealthy, Reason: v1alpha1.ReasonHealthy},
			true, cond{"False", v1alpha1.ReasonFailoverRunning}, cond{"False", v1alpha1.ReasonHealthy}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"no primary", topology.Decision{Kind: topology.KindNoPrimary, Reason: v1alpha1.ReasonNoPrimary},
			false, cond{"False", v1alpha1.ReasonNoPrimary}, cond{"True", v1alpha1.ReasonNoPrimary}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"total loss", topology.Decision{Kind: topology.KindTotalLoss, Reason: v1alpha1.ReasonTotalLoss},
			false, cond{"False", v1alpha1.ReasonTotalLoss}, cond{"True", v1alpha1.ReasonTotalLoss}, cond{"False", v1alpha1.ReasonNotBlocked}},
		{"extra writer", topology.Decision{Kind: topology.KindFenceExtraWriters, Reason: v1alpha1.ReasonSplitBrain},
			false, cond{"False", v1alpha1.ReasonSplitBrain}, cond{"True", v1alpha1.ReasonSplitBrain}, cond{"False", v1alpha1.ReasonNotBlocked}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 2)
			if c.inFlight {
				g.Status.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b", Generation: 2}
			}
			testLoop().recordConditions(g, c.d)
			for typ, want := range map[string]cond{v1alpha1.ConditionReady: c.ready,
				v1alpha1.ConditionDegraded: c.degraded, v1alpha1.ConditionFailoverBlocked: c.block} {
				got := meta.FindStatusCondition(g.Status.Conditions, typ)
				if got == nil || got.Status != want.status || got.Reason != want.reason {
					t.Errorf("%s = %+v, want %s/%s", typ, got, want.status, want.reason)
				}
			}
		})
	}
}

func TestNeedsRepoint(t *testing.T) {
	active := mysql.Endpoint{Host: "orders-a.shop.svc", Port: 3306}
	c := newConns(nil, nil)
	c.sites["a"] = &siteConn{access: SiteAccess{Endpoint: active}}
	replica := func(mod func(rs *mysql.ReplicaStatus)) observation {
		rs := &mysql.ReplicaStatus{SourceHost: active.Host, SourcePort: active.Port, IORunning: mysql.ThreadYes, SQLRunning: true}
		if mod != nil {
			mod(rs)
		}
		return observation{status: mysql.Status{Replica: rs}}
	}
	cases := []struct {
		name string
		o    observation
		want bool
	}{
		{"replicating from the active site", replica(nil), false},
		{"no replication configured", observation{}, true},
		{"replicating from another site", replica(func(rs *mysql.ReplicaStatus) { rs.SourceHost = "orders-b.shop.svc" }), true},
		{"stopped without an error", replica(func(rs *mysql.ReplicaStatus) { rs.SQLRunning, rs.IORunning = false, mysql.ThreadNo }), true},
		{"IO thread retrying is left alone", replica(func(rs *mysql.ReplicaStatus) { rs.IORunning = mysql.ThreadConnecting }), false},
		{"broken replication is left for a person", replica(func(rs *mysql.ReplicaStatus) {
			rs.SQLRunning, rs.LastSQLErrno, rs.LastSQLError = false, 1950, "out of order"
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsRepoint(tc.o, c, "a"); got != tc.want {
				t.Fatalf("needsRepoint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodGone(t *testing.T) {
	failing := t0.Add(10 * time.Second)
	cases := []struct {
		name  string
		seen  bool
		pods  map[string][]time.Time
		since time.Time
		want  bool
	}{
		{"the old Pod is still there", true, map[string][]time.Time{"a": {t0}}, failing, false},
		{"no Pod left", true, map[string][]time.Time{}, failing, true},
		{"only a replacement absent from a listing after the failure", true, map[string][]time.Time{"a": {failing.Add(2 * time.Second)}}, failing, true},
		{"a replacement absent only from a listing at the failure's moment counts as old", true, map[string][]time.Time{"a": {failing}}, failing, false},
		{"never saw a Pod of the site", false, map[string][]time.Time{}, failing, false},
		{"Pods unknown (list failed)", true, nil, failing, false},
		{"site not failing", true, map[string][]time.Time{}, time.Time{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &Loop{seenPod: map[string]bool{"a": c.seen}, podsNow: c.pods, kubeletStopped: map[string]time.Time{"a": failing.Add(time.Minute)}}
			if got := l.podGone("a", c.since); got != c.want {
				t.Fatalf("podGone = %v, want %v", got, c.want)
			}
			delete(l.kubeletStopped, "a")
			if l.podGone("a", c.since) {
				t.Fatal("podGone without the kubelet having heartbeated since")
			}
		})
	}
}

// TestSemiSyncUnavailableCondition: with semi-sync on, a site whose last
// answered probe lacks the MySQL plugins sets SemiSyncUnavailable and is
// named; a probe that failed since does not clear it.
func TestSemiSyncUnavailableCondition(t *testing.T) {
	noPlugins := observation{status: mysql.Status{Flavor: v1alpha1.FlavorMySQL,
		SemiSync: mysql.SemiSync{Missing: "plugin semisync_source (no rpl_semi_sync_source_enabled)"}}}
	ok := observation{status: mysql.Status{Flavor: v1alpha1.FlavorMySQL}}
	cases := []struct {
		name    string
		enabled bool
		last    map[string]observation
		status  metav1.ConditionStatus
		reason  string
	}{
		{"off", false, map[string]observation{"a": ok, "b": noPlugins}, "False", v1alpha1.ReasonSemiSyncOff},
		{"both sites have it", true, map[string]observation{"a": ok, "b": ok}, "False", v1alpha1.ReasonSemiSyncAvailable},
		{"b lacks the plugins", true, map[string]observation{"a": ok, "b": noPlugins}, "True", v1alpha1.ReasonSemiSyncPluginMissing},
		{"b never answered", true, map[string]observation{"a": ok}, "False", v1alpha1.ReasonSemiSyncAvailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 2)
			g.Spec.MySQL.SemiSync.Enabled = c.enabled
			l := testLoop()
			l.last = c.last
			l.recordConditions(g, topology.Decision{Kind: topology.KindHealthy, Reason: v1alpha1.ReasonHealthy})
			got := meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionSemiSyncUnavailable)
			if got == nil || got.Status != c.status || got.Reason != c.reason {
				t.Fatalf("SemiSyncUnavailable = %+v, want %s/%s", got, c.status, c.reason)
			}
			if c.status == "True" && !strings.Contains(got.Message, "b lacks plugin semisync_source") {
				t.Fatalf("message %q does not name b and what it lacks", got.Message)
			}
		})
	}
}

// TestSiteViewSemiSyncUnavailable: a site whose last probe lacks the
// semi-sync plugins is shown so to the candidate choice only while the
// spec turns semi-sync on.
func TestSiteViewSemiSyncUnavailable(t *testing.T) {
	for _, c := range []struct {
		name            string
		enabled         bool
		missing         string
		wantUnavailable bool
	}{
		{"on, plugins missing", true, "plugin semisync_source", true},
		{"on, plugins loaded", true, "", false},
		{"off, plugins missing", false, "plugin semisync_source", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLoop()
			g := testGroup("orders", "a", 2)
			g.Spec.MySQL.SemiSync.Enabled = c.enabled
			d, err := topology.NewDebouncer(3, 2)
			if err != nil {
				t.Fatal(err)
			}
			l.deb = map[string]*topology.Debouncer{"b": d}
			o := observation{status: mysql.Status{Flavor: v1alpha1.FlavorMySQL, ReadOnly: true, SuperReadOnly: true,
				SemiSync: mysql.SemiSync{Missing: c.missing}}, at: t0}
			l.obs, l.last = map[string]observation{"b": o}, map[string]observation{"b": o}
			v := l.siteView(g, v1alpha1.Site{Name: "b"}, func(string) topology.Evidence { return topology.Evidence{Site: "b"} })
			if v.SemiSyncUnavailable != c.wantUnavailable {
				t.Fatalf("SemiSyncUnavailable %v, want %v", v.SemiSyncUnavailable, c.wantUnavailable)
			}
		})
	}
}
