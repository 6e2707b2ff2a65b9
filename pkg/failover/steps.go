package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// fence tries the SQL fence on the old primary unless other evidence already
// confirms it, then waits until every site but the target is confirmed unable
// to write. The attempt is bounded by FenceTimeout, so a blackholed old
// primary delays a pass by no more than that.
func (e *Emergency) fence(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, gated *bool) (string, error) {
	from, _ := p.Input.Site(it.From)
	ev := e.evidence(p, it.From)
	confirmed, by := topology.ConfirmFence(ev)
	if it.From != it.To && !confirmed && from.State != v1alpha1.StateReadOnly {
		cctx, cancel := context.WithTimeout(ctx, p.Settings.FenceTimeout)
		if e.env.DB.Fence(cctx, it.From) == nil {
			confirmed, by = true, topology.ConfirmedBySQL
			RecordFenced(&p.Group.Status, it.From)
		}
		cancel()
	}
	if dl, ok := topology.LeaseDeadline(ev); ok && it.From != it.To {
		deadline := metav1.NewTime(dl).Rfc3339Copy()
		it.FenceDeadline = &deadline
	}
	if ok, why := p.Decision.Promotes(it.From, it.To, confirmed); !ok {
		return why, e.persist(ctx, p) // skipped by the persister when nothing changed
	}
	if !confirmed {
		by = topology.ConfirmedByProbe
	}
	it.FenceConfirmedBy = by
	it.Step = v1alpha1.StepPromoting
	*gated = true
	return "", e.persist(ctx, p)
}

func (e *Emergency) evidence(p Pass, site string) topology.Evidence {
	if p.Evidence == nil {
		return topology.Evidence{Site: site, Active: p.Group.Status.ActiveSite}
	}
	return p.Evidence(site)
}

// promote drains the target's relay log (bounded) and makes it writable. A
// target already writable was promoted before a restart: its set is recorded.
func (e *Emergency) promote(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, gated bool) (string, error) {
	st := &p.Group.Status
	to, _ := p.Input.Site(it.To)
	if to.State == v1alpha1.StateWritable {
		return "", e.promoted(ctx, p, it, to.Executed)
	}
	if !gated {
		if ok, why := p.Decision.Promotes(it.From, it.To, false); !ok {
			return why, nil
		}
	}
	now := e.env.Clock.Now()
	if gen, live := e.sidecar(p, it.To); live && gen < it.Generation && now.Before(e.stepSeen.Add(p.Settings.AdoptionWait)) {
		return fmt.Sprintf("%s's sidecar holds generation %d, waiting for %d", it.To, gen, it.Generation), nil
	}
	if wait := e.drain(ctx, p, it); wait != "" {
		return wait, nil
	}
	// It holds what it was ranked on (received.go).
	if wait, err := e.checkDrained(ctx, p, it); wait != "" || err != nil {
		return wait, err
	}
	// The old primary's missing tail, when it can be read (salvage.go).
	if wait, err := e.salvage(ctx, p, it, gated); wait != "" || err != nil {
		return wait, err
	}
	if err := p.gate(ctx, it.To); err != nil {
		return err.Error(), nil
	}
	// Claimed (persisted exclusively) before the target can write: no other
	// operator process wrote the group since this pass read it (claim.go).
	c := claim(st, it.To)
	if err := e.persistWith(ctx, p, e.env.Persister.PersistStatusExclusive); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrClaim, it.To, err)
	}
	// Its lease fence armed and its semi-sync source set before it can
	// write (semisync.go); if not, nothing made it writable (claim.go).
	if err := PrepareWritable(ctx, p, e.env.DB, e.env.Notifier, e.env.Clock.Now(), it.To); err != nil {
		if werr := withdrawWith(st, c, func() error {
			return e.persistWith(ctx, p, e.env.Persister.PersistStatusExclusive)
		}); werr != nil {
			return "", fmt.Errorf("%w (%w)", err, werr)
		}
		return "", err
	}
	cctx, cancel := e.call(ctx, p)
	pr, err := e.env.DB.Promote(cctx, it.To, PromoteOpts(p, it.To))
	cancel()
	if err != nil {
		err = fmt.Errorf("%w %s: %w", ErrPromote, it.To, err)
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventMaybeWritable, MarkMaybeWritable(st, it.To, err))
		if perr := e.persist(ctx, p); perr != nil {
			return "", fmt.Errorf("%w (recording it: %w)", err, perr)
		}
		return "", err
	}
	e.recordDiscarded(p, it, pr)
	return "", e.promoted(ctx, p, it, pr.Executed)
}

// recordDiscarded adds to the intent's receivedLostGtidSet what the
// promotion's replication reset dropped from the target's relay log:
// what it received and had not applied, including anything received
// after the probe it was ranked on, or that the drain's checks did not
// credit it with (a received set that could not be read). The failover's
// end counts what the promoted set lacks of it (complete, receivedLoss),
// so it is never dropped in silence. A received set that could not be read
// at the reset is said in a Warning Event: what was dropped is unknown.
func (e *Emergency) recordDiscarded(p Pass, it *v1alpha1.FailoverIntent, pr Promotion) {
	if pr.RetrievedUnknown {
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventRelayLogShort,
			fmt.Sprintf("%s's received set could not be read as its replication was reset for its promotion: "+
				"what its relay log held and it had not applied, if anything, is lost and not counted", it.To))
		return
	}
	dropped := topology.DiscardedAtPromotion(pr.Executed, pr.Retrieved)
	if dropped.IsEmpty() {
		return
	}
	prev, _ := gtid.ParseSet(it.ReceivedLostGtidSet)
	it.ReceivedLostGtidSet = prev.Union(dropped).String()
	e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventRelayLogShort,
		fmt.Sprintf("%s's promotion reset its replication with %s (%d transactions) received and not applied: recorded lost",
			it.To, dropped, dropped.Count()))
}

func (e *Emergency) sidecar(p Pass, site string) (int64, bool) {
	if p.Sidecar == nil {
		return 0, false
	}
	return p.Sidecar(site)
}

// drain waits for the target's relay log within DrainTimeout of the step's
// start; past it, or on any error but ErrDrainPending, promotion goes on.
func (e *Emergency) drain(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) string {
	deadline := e.stepSeen.Add(p.Settings.DrainTimeout)
	left := deadline.Sub(e.env.Clock.Now())
	if left <= 0 {
		return ""
	}
	cctx, cancel := context.WithTimeout(ctx, left+p.Settings.CallTimeout)
	defer cancel()
	err := e.env.DB.DrainRelayLog(cctx, it.To, left)
	if errors.Is(err, ErrDrainPending) && e.env.Clock.Now().Before(deadline) {
		return fmt.Sprintf("draining %s's relay log", it.To)
	}
	return ""
}

func (e *Emergency) promoted(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, set gtid.Set) error {
	p.Group.Status.PromotionGtidExecuted, p.Group.Status.PromotionRecorded = set.String(), true
	RecordWritable(&p.Group.Status, it.To)
	it.Step = v1alpha1.StepRouting
	return e.persist(ctx, p)
}

// route moves role labels, the -primary Service and DNS to the target and
// taints the losing site's nodes.
func (e *Emergency) route(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) error {
	if r := e.env.Router; r != nil {
		if err := e.routeTo(ctx, p, r, it); err != nil {
			return err
		}
	}
	it.Step = v1alpha1.StepRepointing
	return e.persist(ctx, p)
}

func (e *Emergency) routeTo(ctx context.Context, p Pass, r Router, it *v1alpha1.FailoverIntent) error {
	g := p.Group
	cctx, cancel := e.call(ctx, p)
	defer cancel()
	if err := r.SetRoleLabels(cctx, g, it.To); err != nil {
		return fmt.Errorf("%w: role labels to %s: %w", ErrRoute, it.To, err)
	}
	if err := pointDNS(cctx, r, e.env.Notifier, g, it.To); err != nil {
		return err
	}
	if it.From != it.To {
		if err := r.TaintSite(cctx, g, it.From); err != nil {
			return fmt.Errorf("%w: taint %s: %w", ErrRoute, it.From, err)
		}
	}
	return nil
}

// repoint points every other reachable, read-only, non-diverged site at the
// target (best effort: the poll loop's maintenance retries), then completes.
func (e *Emergency) repoint(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) error {
	repointReplicas(ctx, e.env.DB, p, it.To)
	return e.complete(ctx, p, it)
}

// abandonedLoss are the intent's abandoned targets whose writes may be
// lost: every one but the new primary (moved back to, its writes are its
// history) and the old primary (its part is read as the source's).
func abandonedLoss(it *v1alpha1.FailoverIntent) []string {
	var out []string
	for _, s := range it.Abandoned {
		if s != it.To && s != it.From && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// repointReplicas points the sites topology.Followers names at target,
// each with its semi-sync part first (PrepareReplica).
// Best effort: the poll loop's maintenance retries. Emergency and planned
// failovers share it.
func repointReplicas(ctx context.Context, db DB, p Pass, target string) {
	promoted, _ := gtid.ParseSet(p.Group.Status.PromotionGtidExecuted)
	for _, site := range topology.Followers(p.Input, target, promoted) {
		PrepareReplica(ctx, p, db, site, target)
		cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
		_ = db.ReplicateFrom(cctx, site, target)
		cancel()
	}
}

// pointDNS points the DNSEndpoint at site, counting and recording the flip,
// or recording its failure as a warning Event. Emergency and planned
// failovers share it.
func pointDNS(ctx context.Context, r Router, n Notifier, g *v1alpha1.MysqlFailoverGroup, site string) error {
	changed, err := r.PointDNS(ctx, g, site)
	if err != nil {
		n.Event(g, EventWarning, v1alpha1.EventDNSFlipFailed, fmt.Sprintf("point DNS at %s: %v", site, err))
		return fmt.Errorf("%w: DNS to %s: %w", ErrRoute, site, err)
	}
	if changed {
		n.DNSFlipped(g)
		n.Event(g, EventNormal, v1alpha1.EventDNSFlipped, fmt.Sprintf("DNS now points at %s", site))
	}
	return nil
}

// complete persists lastFailover and clears the intent.
func (e *Emergency) complete(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) error {
	st := &p.Group.Status
	RecordFailover(st, v1alpha1.FailoverRecord{Time: metav1.NewTime(e.env.Clock.Now()).Rfc3339Copy(), From: it.From, To: it.To,
		Kind: v1alpha1.KindEmergency, Generation: it.Generation, SalvagedTransactions: it.SalvagedTransactions,
		Abandoned: abandonedLoss(it), AbandonedLossPending: abandonedLoss(it)})
	st.ActiveSite, st.Failover = it.To, nil
	e.lostRelay, e.drainSite, e.drainW = nil, "", topology.DrainWatch{}
	promoted, _ := gtid.ParseSet(st.PromotionGtidExecuted)
	lost := receivedLoss(it, promoted)
	if !lost.IsEmpty() {
		RecordReceivedLoss(st, lost)
	}
	if from, ok := p.Input.Site(it.From); ok && it.From != it.To && from.State != v1alpha1.StateUnreachable &&
		from.State != v1alpha1.StateUnknown {
		AccountLoss(st, from.Executed)
	}
	if err := e.persist(ctx, p); err != nil {
		st.Failover = it
		return err
	}
	e.env.Notifier.FailoverCompleted(p.Group, v1alpha1.KindEmergency)
	if !lost.IsEmpty() {
		e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventTransactionsLost,
			fmt.Sprintf("failover %s -> %s lost %d transactions its candidates received and could not apply: %s",
				it.From, it.To, lost.Count(), lost))
	}
	e.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventFailoverExecuted,
		fmt.Sprintf("%s is primary, generation %d (from %s, fence confirmed by %s)", it.To, it.Generation, it.From, it.FenceConfirmedBy))
	return nil
}
