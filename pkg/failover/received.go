package failover

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Candidates are ranked by what they received as well as what they applied
// (topology.Holdings), so the target of an emergency failover may have been
// chosen for transactions still in its relay log. After the drain the
// target is read again (DB.RelayRead) and, when it does not yet hold what
// it was ranked on, topology.JudgeDrain tells a slow applier from a relay
// log that is gone:
//
//   - slow (the SQL thread runs, the received set stands, the executed set
//     advances): the pass waits, bounded by progress (DrainTimeout without
//     an advance) and overall (DrainSlowTimeout), and says so.
//   - gone (the received set shrank, or mysqld restarted) or stalled past
//     the bounds: the target is not promoted on that pass; this memory
//     tells the next passes that the received set its probe shows is not
//     held (Replication.ReceivedLost), so it is ranked on its executed set
//     and Decide retargets when another candidate holds more. What it
//     received and did not apply is recorded in the intent
//     (ReceivedLostGtidSet), and the failover's end counts what the new
//     primary lacks of it as lost: never dropped in silence by Promote's
//     replication reset.

// receivedLost is what Emergency remembers of relay logs found not to hold
// what their site's probe showed received: site to that received set.
type receivedLost map[string]string

// ReceivedLost reports whether site's received set, as its probe shows it
// now, is the one a drain found its relay log did not hold. The poll loop
// sets topology.Replication.ReceivedLost from it. Anything received since
// (another set) counts again. A nil sequence remembers nothing.
func (e *Emergency) ReceivedLost(site string, retrieved gtid.Set) bool {
	if e == nil {
		return false
	}
	got, ok := e.lostRelay[site]
	return ok && got == retrieved.String()
}

// checkDrained reads the target after the drain when it was credited with
// transactions it had not applied, and says why it may not be promoted on
// this pass: it could not be read, its applier is slow, or its relay log is
// gone or stalled. "" when it holds all of it, or nothing was credited.
func (e *Emergency) checkDrained(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) (string, error) {
	to, _ := p.Input.Site(it.To)
	if topology.Unapplied(to).IsEmpty() {
		return "", nil
	}
	cctx, cancel := e.call(ctx, p)
	read, err := e.env.DB.RelayRead(cctx, it.To)
	cancel()
	if err != nil {
		return fmt.Sprintf("%s was ranked on transactions in its relay log, and it could not be read after the drain: %v",
			it.To, err), nil
	}
	if key := fmt.Sprintf("%d/%s", it.Generation, it.To); e.drainSite != key {
		e.drainSite, e.drainW = key, topology.DrainWatch{} // a new target, or the same one again later
	}
	bounds := topology.DrainBounds{Progress: p.Settings.DrainTimeout, Overall: p.Settings.DrainSlowTimeout}
	began := e.drainW.Start.IsZero()
	verdict, w := topology.JudgeDrain(to, e.drainW, read, e.env.Clock.Now(), bounds)
	e.drainW = w
	short := topology.DrainedShort(to, read.Executed)
	switch verdict {
	case topology.DrainHolds:
		return "", nil
	case topology.DrainSlow:
		busy := ""
		if read.ApplierTrx != "" {
			busy = fmt.Sprintf(" (its applier is inside a transaction, %d rows changed so far)", read.ApplierRows)
		}
		msg := fmt.Sprintf("waiting for %s's applier: %d transactions it received are in its relay log, not applied yet (%s)%s; "+
			"it waits while they apply, each %s at most (or while the one in progress changes rows), %s in all (until %s)",
			it.To, short.Count(), short, busy, bounds.Progress, bounds.Overall, w.Start.Add(bounds.Overall).UTC().Format("15:04:05"))
		if began {
			e.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventRelayDrainSlow, msg)
		}
		return msg, nil
	}
	return e.giveUpRelay(ctx, p, it, to, short, verdict)
}

// giveUpRelay records what the target received and will not apply as lost
// for this failover (the failover's end counts what the new primary lacks
// of it), and ranks the target again on what it executed.
func (e *Emergency) giveUpRelay(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, to topology.SiteView,
	short gtid.Set, verdict topology.DrainVerdict) (string, error) {
	prev, _ := gtid.ParseSet(it.ReceivedLostGtidSet)
	it.ReceivedLostGtidSet = prev.Union(short).String()
	reason, why := v1alpha1.EventRelayLogShort, "its relay log did not hold"
	if verdict == topology.DrainStalled {
		reason, why = v1alpha1.EventRelayDrainStalled, "its applier stopped or stalled past the drain bounds, short of"
	}
	msg := fmt.Sprintf("%s: %s %s (%d transactions) its probe showed received: recorded lost unless the new primary holds them; "+
		"not promoted on it, the candidates are ranked again on what they executed", it.To, why, short, short.Count())
	// Remembered only once the loss is on record: a pass re-read after a
	// failed write would otherwise rank the target on what it executed
	// and promote it without the record, and the loss would go uncounted.
	if err := e.persist(ctx, p); err != nil {
		return "", err
	}
	if e.lostRelay == nil {
		e.lostRelay = receivedLost{}
	}
	e.lostRelay[it.To] = to.Replication.Retrieved.String()
	e.env.Notifier.Event(p.Group, EventWarning, reason, msg)
	return msg, nil
}

// receivedLoss is what the failover's targets received and could not
// apply that the promoted set lacks.
func receivedLoss(it *v1alpha1.FailoverIntent, promoted gtid.Set) gtid.Set {
	set, err := gtid.ParseSet(it.ReceivedLostGtidSet)
	if err != nil || set.IsEmpty() {
		return gtid.Set{}
	}
	return gtid.LacksPart(promoted, set)
}
