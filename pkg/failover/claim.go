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

// Claim marks site maybe-writable in g's status and persists that
// exclusively. Only on nil may the caller make site writable.
func Claim(ctx context.Context, per Persister, g *v1alpha1.MysqlFailoverGroup, site string) error {
	claim(&g.Status, site)
	if err := per.PersistStatusExclusive(ctx, g); err != nil {
		return fmt.Errorf("%w %s: %w", ErrClaim, site, err)
	}
	return nil
}

// claim records that site is about to be made writable: it is no longer
// held read-only, and it may be writable until the statement's outcome is known.
func claim(st *v1alpha1.MysqlFailoverGroupStatus, site string) {
	rec := SiteRecord(st, site)
	rec.MaybeWritable, rec.Fenced = true, false
}
