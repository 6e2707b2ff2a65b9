package failover

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Before any statement that may make a site writable (an emergency or
// planned promotion, a re-assertion, a rollback's unfence), the operator
// claims the site: it persists status.sites[].maybeWritable for it with
// Persister.PersistStatusExclusive, an optimistic lock on the status the
// pass decided on. The statement runs only once that write succeeded.
//
// This orders two operator processes through the API server. A deposed
// leader that was paused after its checks (leadership, the snapshot's age)
// either finds its claim refused, because the new leader has written the
// group since, and runs nothing; or its claim lands first, and the new
// leader's next write conflicts: its claim is refused the same way, and an
// ordinary write finds the new mark and is abandoned (the status patcher
// treats a maybe-writable mark it did not know of as the authority moving).
// Either way the new leader reads the mark before it makes any other site
// writable, and Decide fences a maybe-writable site first, or waits for
// evidence gathered after the mark, as for a promotion that timed out.
//
// What stays open: a pause after the claim and before the statement. The
// new leader may then fence the claimed site, and promote another, before
// the paused statement runs. The claimed site's sidecar, which holds the
// newer view naming another site by then, fences it again within one
// peerCheckInterval, and the new leader's probes fence it as an extra writer.
//
// A successful statement clears the mark (RecordWritable); a failed one
// leaves it, as MarkMaybeWritable would set it.
//
// The claim also marks the site's lease fence unproven
// (status.sites[].leaseFenceUnproven), persisted with it: until an arm of
// the site's lease fence is known to have succeeded (ArmLeaseFence, or the
// poll loop's next arm) or the site is seen read-only, its lease deadline
// confirms nothing (topology.LeaseDeadline). An arm refused under a write
// hold lets the step go on (leasefence.go); so does an operator that dies
// between the claim and the end of its pass, whose arm's success is lost.
// Either way nothing proves an event is armed.
//
// A claim whose statement is never sent is withdrawn (Withdraw): the steps
// between the claim and the statement (PrepareWritable: the lease fence's
// arm, the semi-sync source part) can only keep the site read-only, so the
// site is as it was before the claim. Left in place, the mark would make
// the next failover wait for evidence that the site cannot write, though
// nothing could have made it writable. A mark the site held before the
// claim, from an earlier statement whose outcome is unknown, stays. If the
// withdrawal is not persisted, the mark stays: that only costs time.

// Claimed is what a claim replaced in the site's record, for Withdraw.
type Claimed struct {
	site                            string
	maybeWritable, fenced, unproven bool
}

// Claim marks site maybe-writable in g's status and persists that
// exclusively. Only on nil may the caller make site writable.
func Claim(ctx context.Context, per Persister, g *v1alpha1.MysqlFailoverGroup, site string) (Claimed, error) {
	c := claim(&g.Status, site)
	if err := per.PersistStatusExclusive(ctx, g); err != nil {
		return c, fmt.Errorf("%w %s: %w", ErrClaim, site, err)
	}
	return c, nil
}

// claim records that site is about to be made writable: it is no longer
// held read-only, and it may be writable until the statement's outcome is known.
func claim(st *v1alpha1.MysqlFailoverGroupStatus, site string) Claimed {
	rec := SiteRecord(st, site)
	c := Claimed{site: site, maybeWritable: rec.MaybeWritable, fenced: rec.Fenced, unproven: rec.LeaseFenceUnproven}
	rec.MaybeWritable, rec.Fenced, rec.LeaseFenceUnproven = true, false, true
	return c
}

// WithdrawClaim withdraws claim c, whose statement was never sent, and
// persists that exclusively, like the claim: a withdrawal written over
// another writer could erase that writer's own claim of the same site,
// whose statement's outcome may be unknown. If the write is refused, the
// mark is put back in g's status, so no later write of the pass clears it;
// that only costs time.
func WithdrawClaim(ctx context.Context, per Persister, g *v1alpha1.MysqlFailoverGroup, c Claimed) error {
	return withdrawWith(&g.Status, c, func() error { return per.PersistStatusExclusive(ctx, g) })
}

// withdrawWith withdraws c in st and writes it with write; on an error the
// claim's mark is put back.
func withdrawWith(st *v1alpha1.MysqlFailoverGroupStatus, c Claimed, write func() error) error {
	Withdraw(st, c)
	if err := write(); err != nil {
		claim(st, c.site)
		return fmt.Errorf("%w: withdraw the claim on %s: %w", ErrClaim, c.site, err)
	}
	return nil
}

// Withdraw puts back what claim c replaced, for a claim whose statement was
// never sent. The caller persists status exclusively (WithdrawClaim).
func Withdraw(st *v1alpha1.MysqlFailoverGroupStatus, c Claimed) {
	if c.site == "" {
		return
	}
	rec := SiteRecord(st, c.site)
	rec.MaybeWritable, rec.Fenced, rec.LeaseFenceUnproven = c.maybeWritable, c.fenced, c.unproven
}
