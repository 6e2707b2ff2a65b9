//go:build db

package sidecar_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// twoSites starts iad (the writable primary, re-asserted after its sidecar
// heard the operator) and pdx (its replica), each with a sidecar peering with
// the other, and a table t on iad.
func twoSites(t *testing.T) (op *operator, x *toxi, iad, pdx *site) {
	t.Helper()
	return twoSitesWith(t, fast)
}

func twoSitesWith(t *testing.T, tm timing) (op *operator, x *toxi, iad, pdx *site) {
	t.Helper()
	c := testbed.StartMariaDB(t, 2)
	op, x = newOperator(t, "iad"), newToxi()
	iad, pdx = newSite(t, c, 0, "iad"), newSite(t, c, 1, "pdx")
	iad.run(t, x, op, tm, pdx)
	pdx.run(t, x, op, tm, iad)
	iad.reassert(t)
	mustExec(t, iad.appDB(t), "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	return op, x, iad, pdx
}

// pinned is one open application connection that has written once.
func pinned(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.ExecContext(ctxFor(t, 5*time.Second), "INSERT INTO t (v) VALUES (1)"); err != nil {
		t.Fatalf("write before the fence: %v", err)
	}
	return conn
}

// A primary that reaches its peer but not the operator learns from the peer
// that another site holds a newer generation, and fences within one tick.
func TestStalePrimaryFencesOnAPeersNewerView(t *testing.T) {
	op, _, iad, pdx := twoSites(t)
	conn := pinned(t, iad.appDB(t))

	iad.op.blackhole()
	op.set("pdx", 2)
	learned := eventually(t, 5*time.Second, "pdx holds generation 2", func() bool {
		v := pdx.runner.Status().View
		return v != nil && v.Generation == 2
	})
	fenced := eventually(t, fastTick+2*slack, "iad is fenced", func() bool { return !iad.writable(t) })
	t.Logf("iad fenced %s after its peer learned generation 2", fenced.Sub(learned))
	if took := fenced.Sub(learned); took > fastTick+slack {
		t.Fatalf("iad fenced %s after its peer learned the view, want within one tick (%s) + %s", took, fastTick, slack)
	}
	// The runner records the fence a moment after mysqld turns read-only.
	var st sidecar.StatusReport
	eventually(t, 2*slack, "the view fence is recorded", func() bool {
		st = iad.runner.Status()
		return st.LastFence != nil && st.LastFence.Reason == sidecar.ReasonView
	})
	if st.LastFence == nil || st.LastFence.Reason != sidecar.ReasonView || st.ViewSource != "peer/pdx" || st.View.ActiveSite != "pdx" {
		t.Fatalf("iad status after the fence: %+v, view %+v", st.LastFence, st.View)
	}
	if _, err := conn.ExecContext(ctxFor(t, 5*time.Second), "INSERT INTO t (v) VALUES (2)"); err == nil {
		t.Fatal("the open application connection could still write after the fence")
	}
	if got := iad.metric(t, sidecar.MetricSelfFences, `reason="view"`); got != 1 {
		t.Fatalf("%s{reason=view} = %v, want 1", sidecar.MetricSelfFences, got)
	}
}

// flipPeer is a peer sidecar's GET /peer/active-site that serves generation 1
// naming iad until flip, then generation 2 naming pdx, and remembers when it
// first served the latter.
type flipPeer struct {
	mu      sync.Mutex
	flipped bool
	served  time.Time // first answer with generation 2
}

func (p *flipPeer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != v1alpha1.PathPeerActiveSite {
		http.NotFound(w, r)
		return
	}
	v := v1alpha1.ActiveSiteView{Namespace: testNamespace, Group: testGroup, ActiveSite: "iad", Generation: 1}
	p.mu.Lock()
	if p.flipped {
		v.ActiveSite, v.Generation = "pdx", 2
		if p.served.IsZero() {
			p.served = time.Now()
		}
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sidecar.Sign(v))
}

func (p *flipPeer) flip() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flipped = true
	return time.Now()
}

func (p *flipPeer) firstServed() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

// A stale primary whose operator request hangs (blackholed, not refused)
// fences on a peer's newer view as soon as the peer's answer arrives, not
// when the hung request times out: within one peerCheckInterval of the peer
// holding the view, under the default request timeout of two thirds of it.
func TestStalePrimaryFencesWithoutWaitingForAHungOperator(t *testing.T) {
	const tick = 2 * time.Second
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	peer := &flipPeer{}
	peerSrv := httptest.NewServer(http.HandlerFunc(peer.serve))
	t.Cleanup(peerSrv.Close)
	cfg := iad.config(t, x, op, timing{lease: 3 * tick, tick: tick})
	cfg.Peers = []sidecar.Peer{{Name: "pdx", URL: peerSrv.URL}}
	iad.runWith(t, cfg)
	iad.reassert(t)
	requestTimeout := tick * 2 / 3 // the default

	iad.op.blackhole()
	holdWritable(t, iad, tick+tick/2) // ticks now wait out the hung operator request
	learned := peer.flip()
	var st sidecar.StatusReport
	eventually(t, tick+requestTimeout+2*slack, "iad records the view fence", func() bool {
		st = iad.runner.Status()
		return st.LastFence != nil && st.LastFence.Reason == sidecar.ReasonView
	})
	served := peer.firstServed()
	fenced := st.LastFence.At
	t.Logf("iad fenced %s after the peer held generation 2, %s after the peer first served it (request timeout %s)",
		fenced.Sub(learned), fenced.Sub(served), requestTimeout)
	if took := fenced.Sub(learned); took > tick+slack/2 {
		t.Fatalf("fenced %s after the peer held the view, want within one peerCheckInterval %s + %s", took, tick, slack/2)
	}
	if took := fenced.Sub(served); took > requestTimeout/2 {
		t.Fatalf("fenced %s after the peer's answer, want well before the hung operator request times out (%s)", took, requestTimeout)
	}
	if st.View == nil || st.View.ActiveSite != "pdx" || st.View.Generation != 2 || st.ViewSource != "peer/pdx" {
		t.Fatalf("view after the fence: %+v", st.View)
	}
	// The tick that fenced early ends and the next ones run: no second fence.
	holdReadOnly(t, iad, 2*tick)
	if got := iad.metric(t, sidecar.MetricSelfFences, `reason="view"`); got != 1 {
		t.Fatalf("%s{reason=view} = %v, want 1", sidecar.MetricSelfFences, got)
	}
	if n := iad.db.fences.Load() - iad.fencesAtReassert; n != 1 {
		t.Fatalf("%d fences since the re-assert, want 1", n)
	}
}

// ack is one acknowledged write.
type ack struct{ at time.Time }

// writeUntil inserts into t through its own pool until stop closes, and
// returns the acknowledged writes.
func writeUntil(db *sql.DB, stop <-chan struct{}) <-chan []ack {
	out := make(chan []ack, 1)
	go func() {
		var acks []ack
		for {
			select {
			case <-stop:
				out <- acks
				return
			default:
			}
			if _, err := db.Exec("INSERT INTO t (v) VALUES (3)"); err == nil {
				acks = append(acks, ack{at: time.Now()})
			} else {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	return out
}

// A primary that can reach neither the operator nor any peer fences once its
// lease runs out, kills the open application sessions, and acknowledges no
// write after that.
func TestIsolatedPrimarySelfFencesOnLeaseExpiry(t *testing.T) {
	_, _, iad, _ := twoSites(t)
	idle := pinned(t, iad.appDB(t))
	writer := iad.appDB(t)
	writer.SetMaxOpenConns(1)
	stop := make(chan struct{})
	acked := writeUntil(writer, stop)
	time.Sleep(2 * fastTick)

	cut := time.Now()
	iad.op.blackhole()
	iad.peers["pdx"].blackhole()
	eventually(t, fastLease+fastTick+2*slack, "iad is fenced", func() bool { return !iad.writable(t) })
	// mysqld turns read-only inside Fence, a moment before the runner records
	// the fence (it verifies and kills sessions first): wait for the record.
	var st sidecar.StatusReport
	eventually(t, 2*slack, "the lease fence is recorded", func() bool {
		st = iad.runner.Status()
		return st.LastFence != nil && st.LastFence.Reason == sidecar.ReasonLease
	})
	if st.LastFence == nil || st.LastFence.Reason != sidecar.ReasonLease {
		t.Fatalf("last fence %+v, want reason %s", st.LastFence, sidecar.ReasonLease)
	}
	t.Logf("iad fenced %s after the cut (leaseTimeout %s, tick %s)", st.LastFence.At.Sub(cut), fastLease, fastTick)
	if took := st.LastFence.At.Sub(cut); took > fastLease+fastTick+slack {
		t.Fatalf("fenced %s after the cut, want within leaseTimeout %s + one tick %s + %s", took, fastLease, fastTick, slack)
	}
	time.Sleep(3 * fastTick)
	close(stop)
	acks := <-acked
	if len(acks) == 0 {
		t.Fatal("the writer never got a write through before the cut")
	}
	for _, a := range acks {
		if a.at.After(st.LastFence.At) {
			t.Fatalf("a write was acknowledged at %s, after the fence at %s", a.at.Format(time.StampMicro), st.LastFence.At.Format(time.StampMicro))
		}
	}
	if _, err := idle.ExecContext(ctxFor(t, 5*time.Second), "SELECT 1"); err == nil {
		t.Fatal("the open application session survived the fence")
	}
}

// The operator down for 10 s causes no fence: peers vouch for the lease, and
// without peers a lease longer than the outage carries it.
func TestOperatorRestartCausesNoFence(t *testing.T) {
	const down = 10 * time.Second
	t.Run("peers renew the lease", func(t *testing.T) {
		t.Parallel()
		// A lease well below the outage, yet roomy for a loaded machine.
		_, _, iad, pdx := twoSitesWith(t, timing{lease: 3 * time.Second, tick: 500 * time.Millisecond})
		iad.op.stop()
		pdx.op.stop()
		holdWritable(t, iad, down)
		iad.op.start()
		pdx.op.start()
		eventually(t, 5*time.Second, "iad hears the operator again", func() bool {
			return iad.runner.Status().Operator.LastReply == "view"
		})
		noFencesSince(t, iad)
	})
	t.Run("the lease outlasts the outage", func(t *testing.T) {
		t.Parallel()
		c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
		op, x := newOperator(t, "iad"), newToxi()
		iad := newSite(t, c, 0, "iad")
		iad.run(t, x, op, timing{lease: 14 * time.Second, tick: time.Second})
		iad.reassert(t)
		time.Sleep(1500 * time.Millisecond)
		iad.op.stop()
		holdWritable(t, iad, down)
		iad.op.start()
		holdWritable(t, iad, 2*time.Second)
		noFencesSince(t, iad)
	})
}

// holdWritable checks every 100 ms for d that s stays writable.
func holdWritable(t *testing.T, s *site, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if !s.writable(t) {
			t.Fatalf("%s was fenced: %+v", s.name, s.runner.Status().LastFence)
		}
	}
}

// noFencesSince checks that s's sidecar fenced nothing since reassert (which
// follows the boot fence of a writable mysqld).
func noFencesSince(t *testing.T, s *site) {
	t.Helper()
	if n := s.db.fences.Load(); n != s.fencesAtReassert {
		t.Fatalf("%s's sidecar fenced %d times since the operator re-asserted it", s.name, n-s.fencesAtReassert)
	}
	total := 0.0
	for _, r := range []string{sidecar.ReasonView, sidecar.ReasonLease, sidecar.ReasonBoot} {
		total += s.metric(t, sidecar.MetricSelfFences, `reason="`+r+`"`)
	}
	if total != float64(s.fencesAtReassert) {
		t.Fatalf("%s = %v in all, want %d (the boot fence only)", sidecar.MetricSelfFences, total, s.fencesAtReassert)
	}
}

func serveStatic(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A 404 peer (an older sidecar) is skipped silently, a malformed or foreign
// answer is ignored and counted, and the sidecar relies on the operator alone:
// without it, the lease runs out.
func TestOlderAndMalformedPeersAreIgnored(t *testing.T) {
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	cfg := iad.config(t, x, op, fast)
	cfg.Peers = []sidecar.Peer{
		{Name: "old", URL: serveStatic(t, http.StatusNotFound, "404 page not found")},
		{Name: "bad", URL: serveStatic(t, http.StatusOK, `{"group": "orders", "generation": `)},
		{Name: "foreign", URL: serveStatic(t, http.StatusOK, `{"namespace":"shop","group":"billing","activeSite":"pdx","generation":99}`)},
	}
	iad.runWith(t, cfg)
	iad.reassert(t)
	holdWritable(t, iad, 6*fastTick)

	st := iad.runner.Status()
	if st.View == nil || st.View.Generation != 1 || st.ViewSource != v1alpha1.SourceOperator {
		t.Fatalf("view %+v, want the operator's generation 1", st.View)
	}
	if st.Peers[0].LastReply != sidecar.ReplyTooOld.String() {
		t.Fatalf("peer old: last reply %q", st.Peers[0].LastReply)
	}
	for _, k := range []string{sidecar.KindUnreachable, sidecar.KindMalformed, sidecar.KindForeign} {
		if got := iad.metric(t, sidecar.MetricContactErrors, `target="peer/old"`, `kind="`+k+`"`); got != 0 {
			t.Fatalf("older peer counted as a %s contact error: %v", k, got)
		}
	}
	if got := iad.metric(t, sidecar.MetricContactErrors, `kind="malformed"`, `target="peer/bad"`); got < 3 {
		t.Fatalf("malformed answers counted %v times, want every tick", got)
	}
	if got := iad.metric(t, sidecar.MetricContactErrors, `kind="foreign"`, `target="peer/foreign"`); got < 3 {
		t.Fatalf("foreign answers counted %v times, want every tick", got)
	}
	noFencesSince(t, iad)

	cut := time.Now()
	iad.op.blackhole()
	eventually(t, fastLease+fastTick+2*slack, "iad fences on its lease", func() bool { return !iad.writable(t) })
	// mysqld turns read-only inside Fence, a moment before the runner
	// records the fence: wait for the record (a loaded machine showed the gap).
	var last *sidecar.FenceReport
	eventually(t, 2*slack, "the lease fence is recorded", func() bool {
		last = iad.runner.Status().LastFence
		return last != nil && last.Reason == sidecar.ReasonLease
	})
	if last == nil || last.Reason != sidecar.ReasonLease || last.At.Sub(cut) > fastLease+fastTick+slack {
		t.Fatalf("last fence %+v after a cut at %s", last, cut)
	}
}

// A read-only replica is never touched: not when the view names another
// site, not when its lease runs out. Its sessions and replication go on.
func TestReadOnlyReplicaIsNeverTouched(t *testing.T) {
	_, _, iad, pdx := twoSites(t)
	reader, err := pdx.appDB(t).Conn(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reader.Close() }()
	pdx.op.blackhole()
	pdx.peers["iad"].blackhole()
	time.Sleep(fastLease + 3*fastTick)
	if st := pdx.runner.Status(); st.LeaseRemainingSeconds > 0 || st.View == nil || st.View.ActiveSite != "iad" {
		t.Fatalf("pdx status: lease %.1fs, view %+v; want an expired lease and a view naming iad", st.LeaseRemainingSeconds, st.View)
	}
	noFencesSince(t, pdx)
	mustExec(t, iad.appDB(t), "INSERT INTO t (v) VALUES (42)")
	eventually(t, 10*time.Second, "the row reaches pdx over untouched replication", func() bool {
		var n int
		err := reader.QueryRowContext(ctxFor(t, 5*time.Second), "SELECT COUNT(*) FROM t WHERE v = 42").Scan(&n)
		if err != nil {
			t.Fatalf("the replica's open session broke: %v", err)
		}
		return n == 1
	})
}

// A sidecar that boots next to a writable mysqld fences it at once, stays
// fenced while only a peer vouches for this site, reports the fence to the
// operator when it comes back, and never unfences: the operator does.
func TestBootFencesUntilTheOperatorAnswers(t *testing.T) {
	c := testbed.StartMariaDB(t, 2)
	op, x := newOperator(t, "iad"), newToxi()
	iad, pdx := newSite(t, c, 0, "iad"), newSite(t, c, 1, "pdx")
	pdx.run(t, x, op, fast, iad)
	if !iad.writable(t) {
		t.Fatal("the test bed's first instance should start writable")
	}
	cfg := iad.withPeers(t, x, iad.config(t, x, op, fast), pdx)
	iad.op.blackhole()
	booted := time.Now()
	iad.runWith(t, cfg)
	fenced := eventually(t, fastTick+2*slack, "iad fenced at boot", func() bool { return !iad.writable(t) })
	t.Logf("boot fence %s after start", fenced.Sub(booted))
	if took := fenced.Sub(booted); took > slack {
		t.Fatalf("boot fence took %s", took)
	}
	holdReadOnly(t, iad, 4*fastTick)
	if st := iad.runner.Status(); !st.AwaitingOperator || st.View == nil || st.View.ActiveSite != "iad" ||
		st.LastFence == nil || st.LastFence.Reason != sidecar.ReasonBoot {
		t.Fatalf("with only a peer vouching: %+v", st)
	}
	iad.op.heal()
	eventually(t, 5*time.Second, "iad hears the operator", func() bool { return !iad.runner.Status().AwaitingOperator })
	holdReadOnly(t, iad, 3*fastTick)
	rep := op.report("iad")
	if rep.Get(v1alpha1.QueryFenced) != "true" || rep.Get(v1alpha1.QueryMysqld) != "up" || rep.Get(v1alpha1.QueryGeneration) != "1" {
		t.Fatalf("iad's report to the operator: %v", rep)
	}
	iad.reassert(t)
	holdWritable(t, iad, 4*fastTick)
}

func holdReadOnly(t *testing.T, s *site, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if s.writable(t) {
			t.Fatalf("%s became writable", s.name)
		}
	}
}
