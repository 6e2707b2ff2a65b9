package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// salvageInFlight: a wrote A:1-10 and b received A:1-8 when a's mysqld
// died; the failover toward b is persisted; a's mysqld is back, fenced
// (it restarts read-only), and answers, but the debouncer still holds it
// unreachable (recoveryThreshold answers): it is not a candidate yet.
func salvageInFlight(w *world) {
	w.sites["a"].writable, w.sites["a"].seenDown = false, true
	st := &w.persisted.Status
	st.ActiveSite, st.TopologyGeneration = "b", 2
	st.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b", Generation: 2, Step: v1alpha1.StepFencing,
		StartTime: metav1.NewTime(t0)}
}

func TestEmergencySalvage(t *testing.T) {
	cases := []struct {
		name  string
		off   bool
		setup func(w *world)
		// pass edits the pass as the poll loop would have built it.
		pass func(p *Pass)
		// reads says whether the old primary is read at all.
		reads     bool
		salvaged  int64
		lost      int64 // -1: not accounted (the old primary is not read)
		event     string
		promotedB string
	}{
		{name: "restarted fenced, still held unreachable: the tail is taken before the promotion", setup: salvageInFlight,
			reads: true, salvaged: 2, lost: -1, event: v1alpha1.EventTailSalvaged, promotedB: uuidA + ":1-10"},
		{name: "off", off: true, setup: salvageInFlight, lost: -1, promotedB: uuidA + ":1-8"},
		{name: "probes see it down but this pass's SQL fence reached it", setup: primarySeenDownButSQLAnswers,
			reads: true, salvaged: 2, lost: -1, event: v1alpha1.EventTailSalvaged, promotedB: uuidA + ":1-10"},
		{name: "old primary down: not read, not waited for", setup: func(w *world) {
			salvageInFlight(w)
			w.sites["a"].up = false
			w.persisted.Status.Sites[0].Fenced = true // held read-only: confirmed
		}, pass: func(p *Pass) { p.Input.Sites[0].Stale = true }, lost: -1, promotedB: uuidA + ":1-8"},
		{name: "target holds a write the old primary lacks: refused", setup: func(w *world) {
			salvageInFlight(w)
			w.sites["b"].executed = gtid.MustParseSet(uuidA + ":1-8," + uuidB + ":1")
		}, reads: true, lost: -1, event: v1alpha1.EventSalvageRefused, promotedB: uuidA + ":1-8," + uuidB + ":1"},
		{name: "salvage stops part way: the rest is lost", setup: func(w *world) {
			salvageInFlight(w)
			w.salvageStops, w.salvageErr = 1, errors.New("fake: timed out")
		}, reads: true, salvaged: 1, lost: -1, event: v1alpha1.EventTailSalvaged, promotedB: uuidA + ":1-9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if !tc.off {
				w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
			}
			tc.setup(w)
			var atPromote gtid.Set
			w.onPromote = func(site string) {
				atPromote = w.sites[site].executed
				if w.sites["a"].writable {
					t.Errorf("a writable when %s is promoted", site)
				}
			}
			start := w.now
			p := w.pass()
			if tc.pass != nil {
				tc.pass(&p)
			}
			out, err := NewEmergency(w.env()).Advance(t.Context(), p)
			if err != nil || !out.Completed {
				t.Fatalf("advance: %+v, %v", out, err)
			}
			assertCompleted(t, w, "b", "")
			if !atPromote.Equal(gtid.MustParseSet(tc.promotedB)) {
				t.Fatalf("b held %s when promoted, want %s", atPromote, tc.promotedB)
			}
			if read := slices.Contains(w.salvageReads, "a"); read != tc.reads {
				t.Fatalf("a read for salvage: %v, want %v (reads %v)", read, tc.reads, w.salvageReads)
			}
			if !w.now.Equal(start) {
				t.Fatalf("the failover took %s of the fake's clock", w.now.Sub(start))
			}
			lf := w.persisted.Status.LastFailover
			if lf.SalvagedTransactions != tc.salvaged || w.salvaged != tc.salvaged {
				t.Fatalf("salvagedTransactions %d, counted %d, want %d", lf.SalvagedTransactions, w.salvaged, tc.salvaged)
			}
			switch {
			case tc.lost < 0 && lf.TransactionsLost != nil:
				t.Fatalf("transactionsLost %d, want none until a is read", *lf.TransactionsLost)
			case tc.lost >= 0 && (lf.TransactionsLost == nil || *lf.TransactionsLost != tc.lost):
				t.Fatalf("transactionsLost %v, want %d", lf.TransactionsLost, tc.lost)
			}
			if tc.event != "" && !slices.Contains(w.events, tc.event) {
				t.Fatalf("events %v, want %s", w.events, tc.event)
			}
			for _, e := range []string{v1alpha1.EventTailSalvaged, v1alpha1.EventSalvageSkipped, v1alpha1.EventSalvageRefused} {
				if e != tc.event && slices.Contains(w.events, e) {
					t.Fatalf("events %v: unexpected %s", w.events, e)
				}
			}
		})
	}
}

// TestSalvageLossCountedAfterIt: once the old primary is read again,
// transactionsLost is what did not make it, after the salvage.
func TestSalvageLossCountedAfterIt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stops      int
		lost, kept int64
	}{{"whole tail", 0, 0, 2}, {"one of two", 1, 1, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
			salvageInFlight(w)
			if tc.stops > 0 {
				w.salvageStops, w.salvageErr = tc.stops, errors.New("fake: timed out")
			}
			if _, err := run(t, w, NewEmergency(w.env())); err != nil {
				t.Fatal(err)
			}
			w.sites["a"].seenDown = false
			if !AccountLoss(&w.persisted.Status, w.sites["a"].executed) {
				t.Fatal("loss not accounted")
			}
			lf := w.persisted.Status.LastFailover
			if *lf.TransactionsLost != tc.lost || lf.SalvagedTransactions != tc.kept {
				t.Fatalf("lost %d salvaged %d, want %d and %d", *lf.TransactionsLost, lf.SalvagedTransactions, tc.lost, tc.kept)
			}
		})
	}
}

// TestRestartedFencedAndReadmittedIsReassertedInstead: once the debouncer
// lets the fenced old primary back in before the target is writable, the
// decision retargets the failover to it (the freshest candidate): nothing
// is lost and nothing is salvaged.
func TestRestartedFencedAndReadmittedIsReassertedInstead(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	w.sites["a"].seenDown = false
	if _, err := run(t, w, NewEmergency(w.env())); err != nil {
		t.Fatal(err)
	}
	if lf := w.persisted.Status.LastFailover; lf == nil || lf.To != "a" || len(w.salvages) != 0 {
		t.Fatalf("last failover %+v, salvages %v; want back to a, no salvage", lf, w.salvages)
	}
}

// TestSalvageBoundedByTheTimeout: the salvage call's deadline is what is
// left of salvageTimeout, and a second pass of the same failover (its
// promotion waiting on something else) does not start another.
func TestSalvageBoundedByTheTimeout(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 3 * time.Second}
	salvageInFlight(w)
	var left time.Duration
	db := deadlineDB{world: w, left: &left}
	env := w.env()
	env.DB = db
	gate := errors.New("not yet")
	e := NewEmergency(env)
	p := w.pass()
	// The snapshot goes stale during the salvage: the promotion waits.
	p.MayMakeWritable = func(context.Context, string, time.Time) error {
		if len(w.salvages) > 0 {
			return gate
		}
		return nil
	}
	if _, err := e.Advance(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if left <= 0 || left > 3*time.Second {
		t.Fatalf("salvage ran with %s left, want within the 3 s timeout", left)
	}
	if _, err := e.Advance(t.Context(), w.pass()); err != nil {
		t.Fatal(err)
	}
	if len(w.salvages) != 1 || w.persisted.Status.LastFailover.SalvagedTransactions != 2 {
		t.Fatalf("salvages %v, salvaged %d; want one salvage of 2", w.salvages, w.persisted.Status.LastFailover.SalvagedTransactions)
	}
}

// deadlineDB records how much time the salvage call was given.
type deadlineDB struct {
	*world
	left *time.Duration
}

func (d deadlineDB) Salvage(ctx context.Context, n, src string, until, expect gtid.Set, part *topology.SemiSyncRole) (gtid.Set, error) {
	if dl, ok := ctx.Deadline(); ok {
		*d.left = time.Until(dl)
	}
	return d.world.Salvage(ctx, n, src, until, expect, part)
}

// TestSalvageOnlyWhenMayMakeWritable: a pass that may not make the target
// writable (this process lost leadership after it read the group, or its
// snapshot is stale) does not touch the target for a salvage either: a
// new leader may have promoted it already, and a salvage would make it
// read-only and apply the old primary's tail over its new writes. The
// gate is asked before the reads and again right before the salvage.
func TestSalvageOnlyWhenMayMakeWritable(t *testing.T) {
	lost := fmt.Errorf("%w: not the leader", ErrMayNotMakeWritable)
	for _, tc := range []struct {
		name string
		// refuse says whether the gate refuses, given the calls made so far.
		refuse func(w *world) bool
		reads  bool
	}{
		{"leadership lost before the salvage step", func(*world) bool { return true }, false},
		{"leadership lost while the old primary was read", func(w *world) bool { return len(w.salvageReads) > 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
			salvageInFlight(w)
			p := w.pass()
			p.MayMakeWritable = func(context.Context, string, time.Time) error {
				if tc.refuse(w) {
					return lost
				}
				return nil
			}
			before := w.sites["b"].executed
			out, err := NewEmergency(w.env()).Advance(t.Context(), p)
			if err != nil || out.Completed {
				t.Fatalf("advance: %+v, %v; want a wait", out, err)
			}
			if len(w.salvages) != 0 || !w.sites["b"].executed.Equal(before) || w.sites["b"].writable {
				t.Fatalf("salvages %v, b holds %s (writable %v); want b untouched", w.salvages, w.sites["b"].executed, w.sites["b"].writable)
			}
			if read := len(w.salvageReads) > 0; read != tc.reads {
				t.Fatalf("reads %v, want read %v", w.salvageReads, tc.reads)
			}
		})
	}
}

// TestSalvageIntoALeftoverSemiSyncSource: an earlier attempt made b the
// semi-sync source (PrepareWritable) and died before Promote; the
// restarted operator salvages into b. Its applied commits would wait for
// acknowledgements nobody sends (the fake's Salvage stalls): b is given
// its replica part under a first, and the tail arrives.
func TestSalvageIntoALeftoverSemiSyncSource(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	w.semiSync = semiSyncSpec(true, true)
	w.semiRoles = map[string]topology.SemiSyncRole{"b": {Site: "b", Source: true, Timeout: 49 * 24 * time.Hour, WaitCount: 1}}
	if _, err := run(t, w, NewEmergency(w.env())); err != nil {
		t.Fatal(err)
	}
	if lf := w.persisted.Status.LastFailover; lf == nil || lf.SalvagedTransactions != 2 {
		t.Fatalf("last failover %+v, want 2 transactions salvaged", lf)
	}
	if !w.semiRoles["b"].Source || len(w.unsourced) != 0 {
		t.Fatalf("b's part %+v when promoted (unsourced %v), want the source's again", w.semiRoles["b"], w.unsourced)
	}
}

// TestSalvageUnknownWhenUnread: the salvage failed and the target's set
// could not be read after it: what arrived is unknown, and the Event says
// so rather than that nothing arrived.
func TestSalvageUnknownWhenUnread(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	w.salvageStops, w.salvageErr, w.salvageUnread = 1, errors.New("fake: connection lost"), true
	rec := &eventText{world: w}
	env := w.env()
	env.Notifier = rec
	if _, err := run(t, w, NewEmergency(env)); err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, m := range rec.msgs {
		if strings.Contains(m, "salvage") || strings.Contains(m, "binlogs") {
			msg = m
		}
	}
	if !strings.Contains(msg, "unknown") || strings.Contains(msg, "brought nothing") {
		t.Fatalf("salvage event %q, want it to say what arrived is unknown", msg)
	}
}

// eventText records the Events' messages too.
type eventText struct {
	*world
	msgs []string
}

func (e *eventText) Event(g *v1alpha1.MysqlFailoverGroup, typ, reason, msg string) {
	e.msgs = append(e.msgs, msg)
	e.world.Event(g, typ, reason, msg)
}

// TestSalvageTargetFoundWritable: DB.Salvage refuses a target it finds
// writable (another operator promoted it after this pass's gate): the
// refusal is said as such, and nothing is counted as salvaged.
func TestSalvageTargetFoundWritable(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	rec := &eventText{world: w}
	env := w.env()
	env.Notifier = rec
	env.DB = writableTargetDB{w}
	if _, err := run(t, w, NewEmergency(env)); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.events, v1alpha1.EventSalvageRefused) {
		t.Fatalf("events %v (%q), want SalvageRefused", w.events, rec.msgs)
	}
	if lf := w.persisted.Status.LastFailover; lf != nil && lf.SalvagedTransactions != 0 {
		t.Fatalf("salvaged %d, want none", lf.SalvagedTransactions)
	}
}

// writableTargetDB's Salvage finds its target writable.
type writableTargetDB struct{ *world }

func (writableTargetDB) Salvage(context.Context, string, string, gtid.Set, gtid.Set, *topology.SemiSyncRole) (gtid.Set, error) {
	return gtid.Set{}, fmt.Errorf("salvage b from a: %w", ErrSalvageTargetWritable)
}

// TestSalvageOrderedByTheStatus: this process still believes it leads (its
// gate passes) but a new leader wrote the group while the old primary was
// read. The salvage's exclusive status write is refused, as a promotion's
// claim would be, and nothing is sent to the target: the new leader may
// have promoted it.
func TestSalvageOrderedByTheStatus(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	p := w.pass()
	wrote := false
	p.MayMakeWritable = func(context.Context, string, time.Time) error {
		if len(w.salvageReads) > 0 && !wrote {
			wrote = true
			w.otherWriter()
		}
		return nil
	}
	before := w.sites["b"].executed
	out, err := NewEmergency(w.env()).Advance(t.Context(), p)
	if err == nil || out.Completed {
		t.Fatalf("advance: %+v, %v; want the pass refused", out, err)
	}
	if len(w.salvages) != 0 || !w.sites["b"].executed.Equal(before) || w.sites["b"].writable {
		t.Fatalf("salvages %v, b holds %s (writable %v); want b untouched", w.salvages, w.sites["b"].executed, w.sites["b"].writable)
	}
}

// TestSalvageRefusesATargetChangedSinceItsRead (review D3): between the
// salvage's read of the target and its start, the target changed (a new
// leader promoted it and it wrote; or it was repointed). The salvage is
// given the set it read, the target refuses it under its topology lock,
// and the target keeps what it holds: nothing of the old primary's tail
// lands on top of it.
func TestSalvageRefusesATargetChangedSinceItsRead(t *testing.T) {
	cases := []struct {
		name   string
		change func(*fakeSite)
	}{
		{"it wrote since", func(s *fakeSite) { s.executed = s.executed.Union(gtid.MustParseSet(uuidB + ":1")) }},
		{"it replicates from another source since", func(s *fakeSite) { s.source = "c" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
			salvageInFlight(w)
			env := w.env()
			env.DB = changedAfterReadDB{world: w, change: tc.change}
			if _, err := run(t, w, NewEmergency(env)); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(w.salvageMoved, "b") || !slices.Contains(w.events, v1alpha1.EventSalvageRefused) {
				t.Fatalf("refused %v, events %v: want b's salvage refused", w.salvageMoved, w.events)
			}
			if lf := w.persisted.Status.LastFailover; lf != nil && lf.SalvagedTransactions != 0 {
				t.Fatalf("salvaged %d into a target changed since its read", lf.SalvagedTransactions)
			}
		})
	}
}

// changedAfterReadDB changes the target right after its salvage read.
type changedAfterReadDB struct {
	*world
	change func(*fakeSite)
}

func (d changedAfterReadDB) SalvageRead(ctx context.Context, n string) (bool, gtid.Set, error) {
	fenced, set, err := d.world.SalvageRead(ctx, n)
	if n == "b" && err == nil {
		d.change(d.sites["b"])
	}
	return fenced, set, err
}

// TestSalvageNeverReconfiguresAPromotedTarget (issue 15, gap 1): a new
// leader made b the semi-sync source and promoted it after this (deposed)
// process read b for its salvage. The salvage is refused under b's
// topology lock, and b's semi-sync part must be untouched by then: before,
// PrepareReplica gave b the replica part ahead of the lock, and the new
// primary's commits stopped waiting for an acknowledgement.
func TestSalvageNeverReconfiguresAPromotedTarget(t *testing.T) {
	w := newWorld(t)
	w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	salvageInFlight(w)
	w.semiSync = semiSyncSpec(true, true)
	source := topology.SemiSyncRole{Site: "b", Source: true, Timeout: 49 * 24 * time.Hour, WaitCount: 1}
	db := &partAtSalvageDB{changedAfterReadDB: changedAfterReadDB{world: w, change: func(s *fakeSite) {
		w.semiRoles = map[string]topology.SemiSyncRole{"b": source}
		s.source, s.executed = "", s.executed.Union(gtid.MustParseSet(uuidB+":1"))
	}}}
	env := w.env()
	env.DB = db
	if _, err := run(t, w, NewEmergency(env)); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.salvageMoved, "b") {
		t.Fatalf("refused %v: want b's salvage refused", w.salvageMoved)
	}
	if !db.part.Source || db.part.Replica {
		t.Fatalf("b's semi-sync part as its salvage was refused: %+v, want the new primary's source part kept", db.part)
	}
}

// partAtSalvageDB records the target's semi-sync part as Salvage returns.
type partAtSalvageDB struct {
	changedAfterReadDB
	part topology.SemiSyncRole
}

func (d *partAtSalvageDB) Salvage(ctx context.Context, n, src string, until, expect gtid.Set, part *topology.SemiSyncRole) (gtid.Set, error) {
	set, err := d.world.Salvage(ctx, n, src, until, expect, part)
	d.part = d.semiRoles[n]
	return set, err
}
