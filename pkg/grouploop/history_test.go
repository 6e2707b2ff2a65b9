package grouploop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Issue 13, path 3: divergence was marked only in healthy passes, so a
// former primary seen only while the group had no writer was never marked.
// markErrant runs in every pass: here one blocked on the missing candidate.
func TestMarkErrantInABlockedPass(t *testing.T) {
	l := testLoop()
	rec := events.NewFakeRecorder(4)
	l.env.Notifier.rec = rec
	g := testGroup("orders", "b", 3)
	errant := gtid.MustParseSet("aaaaaaaa-0000-0000-0000-000000000001:11-15")
	d := topology.Decision{Kind: topology.KindFailoverBlocked, Reason: v1alpha1.ReasonNoCandidate,
		Wanted: topology.KindFailover, Errant: []topology.Divergence{{Site: "a", GTIDs: errant}}}
	l.markErrant(g, d)
	l.markErrant(g, d) // a second pass neither re-marks nor re-announces
	if got := g.Status.Sites[0]; got.Name != "a" || got.DivergentGtid != errant.String() {
		t.Fatalf("sites %+v, want a marked %s", g.Status.Sites, errant)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d Events, want one", n)
	}
	if ev := <-rec.Events; !strings.Contains(ev, v1alpha1.EventDivergenceDetected) || !strings.Contains(ev, errant.String()) {
		t.Fatalf("Event %q", ev)
	}
	if v := testutil.ToFloat64(l.env.Metrics.Diverged.WithLabelValues("shop", "orders", "a")); v != 1 {
		t.Fatalf("diverged gauge %v", v)
	}
}

func TestCandidacyReadsTheRelayLog(t *testing.T) {
	cases := []struct {
		name      string
		flavor    v1alpha1.Flavor
		rs        mysql.ReplicaStatus
		sqlError  bool
		retrieved string
		unknown   bool
	}{
		{"mysql SQL thread stopped on an error", v1alpha1.FlavorMySQL,
			mysql.ReplicaStatus{LastSQLErrno: 1062, Retrieved: "aaaaaaaa-0000-0000-0000-000000000001:1-12"},
			true, "aaaaaaaa-0000-0000-0000-000000000001:1-12", false},
		{"an SQL error while the thread runs again is no failure", v1alpha1.FlavorMySQL,
			mysql.ReplicaStatus{LastSQLErrno: 1062, SQLRunning: true}, false, "", false},
		{"mariadb io pos is the GTID each domain reached", v1alpha1.FlavorMariaDB,
			mysql.ReplicaStatus{LastSQLErrno: 1062, Retrieved: "0-1-102,1-3-7"}, true, "0-1:102,1-3:7", false},
		{"mysql healthy replica: what it received counts for ranking too", v1alpha1.FlavorMySQL,
			mysql.ReplicaStatus{SQLRunning: true, Retrieved: "aaaaaaaa-0000-0000-0000-000000000001:1-12,bbbbbbbb-0000-0000-0000-000000000002:1-2"},
			false, "aaaaaaaa-0000-0000-0000-000000000001:1-12,bbbbbbbb-0000-0000-0000-000000000002:1-2", false},
		{"mariadb healthy replica: domain 0 position", v1alpha1.FlavorMariaDB,
			mysql.ReplicaStatus{SQLRunning: true, Retrieved: "0-2-105"}, false, "0-2:105", false},
		{"mysql garbage is unknown", v1alpha1.FlavorMySQL,
			mysql.ReplicaStatus{SQLRunning: true, Retrieved: "0-1-102"}, false, "", true},
		{"garbage is unknown", v1alpha1.FlavorMariaDB,
			mysql.ReplicaStatus{LastSQLErrno: 1062, Retrieved: "nonsense"}, true, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r topology.Replication
			candidacy(&r, c.rs, c.flavor)
			if r.SQLError != c.sqlError || r.RetrievedUnknown != c.unknown || !r.Retrieved.Equal(gtid.MustParseSet(c.retrieved)) {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

// Issue 13, path 3 end to end (errant-former-primary): the former primary
// heals while the new active site is down, so no pass is healthy. The first
// failover's loss must be accounted in that pass, from the former primary's
// executed set, and not wait for a healthy pass that may never show it.
func TestAccountLossInABlockedPass(t *testing.T) {
	l := testLoop()
	l.env.Notifier.rec = events.NewFakeRecorder(4)
	g := testGroup("orders", "b", 2)
	g.Status.PromotionGtidExecuted = "0-1:1-307"
	g.Status.LastFailover = &v1alpha1.FailoverRecord{From: "a", To: "b", Kind: v1alpha1.KindEmergency,
		Time: metav1.NewTime(t0.Add(-2 * time.Second))}
	readOnly := mysql.Status{Executed: gtid.MustParseSet("0-1:1-810"), ReadOnly: true}
	d := topology.Decision{Kind: topology.KindFailoverBlocked, Reason: v1alpha1.ReasonNoCandidate, Wanted: topology.KindFailover}
	lf := g.Status.LastFailover
	// Reads that cannot hold a's whole history account nothing yet.
	for name, o := range map[string]observation{
		"read in the failover's second": {status: readOnly, at: t0.Add(-1500 * time.Millisecond)},
		"a still writable":              {status: mysql.Status{Executed: readOnly.Executed}, at: t0},
		"a unreachable":                 {err: errors.New("connection refused"), at: t0},
	} {
		l.obs = map[string]observation{"a": o, "b": {err: errors.New("connection refused"), at: t0}}
		l.markHistory(g, d)
		if lf.TransactionsLost != nil {
			t.Fatalf("%s: accounted %d lost", name, *lf.TransactionsLost)
		}
	}
	l.obs = map[string]observation{"a": {status: readOnly, at: t0}, "b": {err: errors.New("connection refused"), at: t0}}
	l.markHistory(g, d)
	if lf.TransactionsLost == nil || *lf.TransactionsLost != 503 || lf.LostGtidSet != "0-1:308-810" {
		t.Fatalf("lastFailover %+v: want 503 lost, 0-1:308-810", lf)
	}
}

// Review of issue 13: the debouncer keeps a recovering site unreachable for
// recoveryThreshold answers, and an unreachable site whose lease deadline
// passed counts as confirmed fenced. A site this pass saw writable must be
// shown writable, so Decide fences it rather than promoting past it.
func TestSiteSeenWritableIsAWriter(t *testing.T) {
	l := testLoop()
	g := testGroup("orders", "a", 2)
	d, err := topology.NewDebouncer(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := d.Observe(t0.Add(time.Duration(i)*time.Second), topology.ProbeFailed); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := d.Observe(t0.Add(3*time.Second), topology.ProbeWritable); err != nil {
		t.Fatal(err)
	}
	l.deb = map[string]*topology.Debouncer{"a": d}
	l.obs = map[string]observation{"a": {status: mysql.Status{}, at: t0.Add(3 * time.Second)}}
	l.answered = map[string]bool{"a": true}
	confirmed := func(string) topology.Evidence { return topology.Evidence{Site: "a", PodGone: true} }
	v := l.siteView(g, v1alpha1.Site{Name: "a"}, confirmed)
	if v.State != v1alpha1.StateWritable || v.FenceConfirmed {
		t.Fatalf("site seen writable shown %s, fence confirmed %v", v.State, v.FenceConfirmed)
	}
}

// TestReplicatingGauge: a replica whose replication runs is 1, one whose
// SQL thread stopped on an error is 0, and a site with no replication set
// up (the primary) has no series.
func TestReplicatingGauge(t *testing.T) {
	l := testLoop()
	g := testGroup("orders", "b", 3)
	gauge := func() float64 {
		return testutil.ToFloat64(l.env.Metrics.Replicating.WithLabelValues("shop", "orders", "a"))
	}
	rec := &v1alpha1.SiteStatus{Name: "a"}
	running := mysql.ReplicaStatus{IORunning: mysql.ThreadYes, SQLRunning: true}
	l.recordProbe(g, rec, observation{status: mysql.Status{Replica: &running}})
	if v := gauge(); v != 1 || !rec.Replicating {
		t.Fatalf("running replication: gauge %v, status %v", v, rec.Replicating)
	}
	broken := mysql.ReplicaStatus{IORunning: mysql.ThreadYes, LastSQLErrno: 1062}
	l.recordProbe(g, rec, observation{status: mysql.Status{Replica: &broken}})
	if v := gauge(); v != 0 || rec.Replicating {
		t.Fatalf("broken replication: gauge %v, status %v", v, rec.Replicating)
	}
	l.recordProbe(g, rec, observation{status: mysql.Status{}})
	if n := testutil.CollectAndCount(l.env.Metrics.Replicating); n != 0 {
		t.Fatalf("a site with no replication keeps %d series", n)
	}
}

// A failover a -> b abandoned target c, whose lost promotion answer let it
// write 0-3:1-4 until its fence; b received 0-3:1-2. Each pass that reads c
// (read-only, after the failover) counts what b never received, with a
// TransactionsLost Event, though a is never read again. Before, c was only
// marked divergent and transactionsLost stayed absent.
func TestAccountAbandonedTargetsLoss(t *testing.T) {
	const uA, uB, uC = "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002", "cccccccc-0000-0000-0000-000000000003"
	l := testLoop()
	l.env.Notifier.rec = events.NewFakeRecorder(4)
	g := testGroup("orders", "b", 2)
	g.Status.PromotionGtidExecuted = uA + ":1-307," + uC + ":1-2"
	g.Status.Sites = append(g.Status.Sites, v1alpha1.SiteStatus{Name: "c", ServerID: uC})
	g.Status.LastFailover = &v1alpha1.FailoverRecord{From: "a", To: "b", Kind: v1alpha1.KindEmergency,
		Time: metav1.NewTime(t0.Add(-2 * time.Second)), Abandoned: []string{"c"}, AbandonedLossPending: []string{"c"}}
	lf := g.Status.LastFailover
	d := topology.Decision{Kind: topology.KindHealthy}
	down := observation{err: errors.New("connection refused"), at: t0}
	l.obs = map[string]observation{"a": down, "c": {status: mysql.Status{Executed: gtid.MustParseSet(uA + ":1-307," + uC + ":1-4")}, at: t0}}
	l.markHistory(g, d)
	if lf.TransactionsLost != nil {
		t.Fatalf("c read writable: accounted %d lost", *lf.TransactionsLost)
	}
	l.obs["c"] = observation{status: mysql.Status{Executed: gtid.MustParseSet(uA + ":1-307," + uC + ":1-4," + uB + ":1-9"), ReadOnly: true}, at: t0}
	l.markHistory(g, d)
	if lf.TransactionsLost == nil || *lf.TransactionsLost != 2 || lf.LostGtidSet != uC+":3-4" || !lf.LossPending() ||
		len(lf.AbandonedLossPending) != 0 {
		t.Fatalf("lastFailover %+v: want 2 lost (C:3-4), pending the old primary", lf)
	}
	if len(l.env.Notifier.rec.(*events.FakeRecorder).Events) != 1 {
		t.Fatal("no TransactionsLost Event for the abandoned target's loss")
	}
}
