package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// salvageMemo is what Emergency remembers of the salvage of the failover
// in flight: when it was first considered (its timeout counts from there,
// over every pass) and whether it is over. Memory only: a restarted
// operator considers it anew, within a new timeout, and takes only what
// the target still lacks.
type salvageMemo struct {
	generation int64
	started    time.Time
	done, told bool
}

// salvage runs in the promoting step, after the old primary is confirmed
// unable to write and the relay log drained, before anything makes the
// target writable: when topology.DecideSalvage says so, the target takes
// the old primary's missing tail from its binlogs. It never blocks the
// promotion: whatever happens (skip, refusal, timeout, error) promote goes
// on, and what the target lacks is counted as lost (AccountLoss) from the
// set Promote captures after it. Only a failed status write is returned.
//
// It is also a step that changes the target, so it runs only on a pass
// that may make the target writable (Pass.MayMakeWritable: this process
// leads, its snapshot is fresh), asked before the reads and again right
// before the target is pointed at the old primary: an operator that lost
// leadership meanwhile must not touch a target a new leader may have
// promoted. A refusal is returned as the reason to wait, as the gate's.
// Right before the target is touched, the status is written exclusively,
// as a promotion's claim is: a new leader that wrote the group since this
// pass read it refuses the salvage through the API server. A new leader
// whose write comes after that is ordered on the target itself: its
// Promote and the salvage's start take the server's topology lock
// (mysql/topolock.go).
func (e *Emergency) salvage(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, gated bool) (string, error) {
	m := e.salvageMemoFor(it)
	if m.done {
		return "", nil
	}
	in := p.Input
	in.InFlight = &topology.Intent{From: it.From, To: it.To, Generation: it.Generation, Step: it.Step,
		Abandoned: slices.Clone(it.Abandoned), AbandonedWrote: abandonedWrote(it)}
	att := topology.SalvageAttempt{Timeout: p.Settings.SalvageTimeout, Started: m.started, Now: e.env.Clock.Now(),
		SQLReached: gated && it.FenceConfirmedBy == topology.ConfirmedBySQL}
	d := topology.DecideSalvage(in, att)
	if d.Action == topology.SalvageRead {
		if err := p.gate(ctx, it.To); err != nil {
			return err.Error(), nil
		}
		att.Read = e.salvageRead(ctx, p, it, d.Budget)
		att.Now = e.env.Clock.Now()
		d = topology.DecideSalvage(in, att)
	}
	switch d.Action {
	case topology.SalvageSkip:
		// A later pass of this step may find the old primary readable,
		// within the same timeout; it is told once.
		if !m.told && d.Reason != "" {
			m.told = true
			e.env.Notifier.Event(p.Group, EventNormal, d.Reason, d.Message)
		}
		return "", nil
	case topology.SalvageRefuse:
		e.env.Notifier.Event(p.Group, EventWarning, d.Reason, d.Message)
	case topology.SalvageApply:
		if err := p.gate(ctx, it.To); err != nil {
			return err.Error(), nil
		}
		// Ordered with another operator process as a claim is (claim.go):
		// refused when it wrote the group since this pass read it.
		if err := e.persistWith(ctx, p, e.env.Persister.PersistStatusExclusive); err != nil {
			return "", fmt.Errorf("%w: salvage into %s: %w", ErrClaim, it.To, err)
		}
		m.done = true
		var expect gtid.Set // DecideSalvage applies only on a pass that read
		if att.Read != nil {
			expect = att.Read.Target
		}
		return "", e.salvageTail(ctx, p, it, d, expect)
	}
	m.done = true
	return "", nil
}

func (e *Emergency) salvageMemoFor(it *v1alpha1.FailoverIntent) *salvageMemo {
	if e.salvageM.generation != it.Generation {
		e.salvageM = salvageMemo{generation: it.Generation, started: e.env.Clock.Now()}
	}
	return &e.salvageM
}

// salvageRead reads the old primary's fence and set, then the target's,
// each within FenceTimeout (the old primary may stop answering again) and
// the budget.
func (e *Emergency) salvageRead(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent,
	budget time.Duration) *topology.SalvageReadout {
	r := &topology.SalvageReadout{}
	var err error
	read := func(site string) (bool, gtid.Set, error) {
		cctx, cancel := context.WithTimeout(ctx, min(p.Settings.FenceTimeout, budget))
		defer cancel()
		return e.env.DB.SalvageRead(cctx, site)
	}
	if r.SourceFenced, r.Source, err = read(it.From); err != nil {
		r.Failed = fmt.Sprintf("reading %s: %v", it.From, err)
		return r
	}
	if r.TargetFenced, r.Target, err = read(it.To); err != nil {
		r.Failed = fmt.Sprintf("reading %s: %v", it.To, err)
	}
	return r
}

// salvageTail replicates the tail into the target, bounded by what is
// left of the timeout, counts what arrived and records it. The target
// gets its semi-sync replica part under the old primary as the salvage
// starts: an earlier attempt may have left it the semi-sync source
// (PrepareWritable, then the process died before Promote), and the
// commits it applies would wait for acknowledgements nobody sends. That
// part is set by DB.Salvage under the target's topology lock, after its
// checks, never before them: a target a new leader promoted meanwhile is
// refused untouched, its source part kept. expect is the target's
// executed set as read: the salvage starts only while the target still
// holds it and replicates from the old primary (DB.Salvage).
func (e *Emergency) salvageTail(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, d topology.Salvage, expect gtid.Set) error {
	cctx, cancel := context.WithTimeout(ctx, d.Budget)
	after, err := e.env.DB.Salvage(cctx, it.To, it.From, d.Until, expect, replicaPart(p, it.To, it.From))
	cancel()
	var got gtid.Set
	if !after.IsEmpty() {
		got = d.Tail.Subtract(gtid.LacksPart(after, d.Tail))
	}
	n := int64(got.Count())
	switch {
	case errors.Is(err, ErrSalvageTargetWritable):
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventSalvageRefused,
			fmt.Sprintf("%s was found writable as its salvage from %s started, and was left as it was: %v", it.To, it.From, err))
		return nil
	case errors.Is(err, ErrSalvageTargetMoved):
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventSalvageRefused,
			fmt.Sprintf("%s changed since it was read (promoted since?) as its salvage from %s started, and was left as it was: %v",
				it.To, it.From, err))
		return nil
	case err != nil && after.IsEmpty():
		// The target's set was not read after the salvage: some of the
		// tail may have arrived. transactionsLost stays exact (it counts
		// from the set Promote captures); salvagedTransactions counts
		// only what is known to have arrived.
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventSalvageSkipped,
			fmt.Sprintf("salvage of %s from %s into %s failed, and how much of it arrived is unknown: %v; "+
				"what %s still lacks is counted as lost once %s is read", d.Tail, it.From, it.To, err, it.To, it.From))
		return nil
	case err == nil && n == int64(d.Tail.Count()):
		e.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventTailSalvaged,
			fmt.Sprintf("%s took %s (%d transactions) from %s's binlogs before its promotion", it.To, got, n, it.From))
	case n > 0:
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventTailSalvaged,
			fmt.Sprintf("%s took %s (%d of %d transactions) from %s's binlogs, then stopped: %v; the rest is counted as lost",
				it.To, got, n, d.Tail.Count(), it.From, err))
	default:
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventSalvageSkipped,
			fmt.Sprintf("salvage of %s from %s into %s brought nothing: %v; it is counted as lost once %s is read",
				d.Tail, it.From, it.To, err, it.From))
	}
	if n == 0 {
		return nil
	}
	it.SalvagedTransactions += n
	e.env.Notifier.Salvaged(p.Group, n)
	return e.persist(ctx, p)
}
