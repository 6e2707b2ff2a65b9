package failover

import (
	"slices"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// A failover's loss is read in parts, each once its site can be read: what
// its candidates received and could not apply (at its end), the old
// primary's tail (AccountLoss) and what each abandoned target wrote
// (AccountAbandonedLoss). transactionsLost counts the union of the parts
// read so far; it is a lower bound (FailoverRecord.LossPending) until every
// part is read.

// AccountLoss adds to lastFailover's loss the old primary's part, read once
// it is reachable again: whatever it executed that the target did not hold
// when it was promoted (gtid.Lacks), except the target's own transactions
// written since. It does nothing, and returns false, when that part is
// already accounted or there is nothing to account it against.
func AccountLoss(st *v1alpha1.MysqlFailoverGroupStatus, fromExecuted gtid.Set) bool {
	lf := st.LastFailover
	if lf == nil || sourceAccounted(lf) || st.Failover != nil {
		return false
	}
	promoted, err := gtid.ParseSet(st.PromotionGtidExecuted)
	if err != nil {
		return false
	}
	// Lacks, not Subtract: a MariaDB set read from @@gtid_binlog_state
	// guesses which server wrote which seq, and the old primary's guess
	// may name seqs the target held under another server.
	lost := gtid.Lacks(promoted, fromExecuted)
	if id := SiteStatusOf(st, lf.To).ServerID; id != "" {
		// The new primary's own transactions are never lost: the old one,
		// repointed at it before this read, holds those it wrote since.
		lost = lost.Without(id)
	}
	if lf.From == lf.To {
		// Promoted again itself (a retarget back to the old primary): it
		// lost nothing, and what it wrote since is no loss either.
		lost = gtid.Set{}
	}
	if rl, err := gtid.ParseSet(lf.ReceivedLostGtidSet); err == nil {
		lost = lost.Union(rl)
	}
	addLoss(lf, lost)
	lf.SourceLossPending = false
	syncLastFailover(st)
	return true
}

// AccountAbandonedLoss adds to lastFailover's loss the part of site, an
// abandoned target still to be read (abandonedLossPending), read while it
// cannot write: its own transactions the new primary did not hold when it
// was made writable. Only its own: what it replicated is another site's
// part. It returns whether it accounted the part.
func AccountAbandonedLoss(st *v1alpha1.MysqlFailoverGroupStatus, site string, executed gtid.Set) bool {
	lf := st.LastFailover
	if lf == nil || st.Failover != nil || !slices.Contains(lf.AbandonedLossPending, site) {
		return false
	}
	promoted, err := gtid.ParseSet(st.PromotionGtidExecuted)
	id := SiteStatusOf(st, site).ServerID
	if err != nil || id == "" {
		return false // its writes cannot be told from others' yet
	}
	var lost gtid.Set
	if site != lf.To {
		lost = gtid.Lacks(promoted, executed).Only(id)
	}
	if lf.TransactionsLost == nil {
		lf.SourceLossPending = true // the old primary's part is still to come
	}
	addLoss(lf, lost)
	lf.AbandonedLossPending = slices.DeleteFunc(slices.Clone(lf.AbandonedLossPending), func(s string) bool { return s == site })
	if len(lf.AbandonedLossPending) == 0 {
		lf.AbandonedLossPending = nil
	}
	syncLastFailover(st)
	return true
}

// addLoss unites lost with the loss lf counts so far.
func addLoss(lf *v1alpha1.FailoverRecord, lost gtid.Set) {
	if lf.TransactionsLost != nil {
		if prior, err := gtid.ParseSet(lf.LostGtidSet); err == nil {
			lost = lost.Union(prior)
		}
	}
	n := int64(lost.Count())
	lf.TransactionsLost, lf.LostGtidSet = &n, lost.String()
}

// sourceAccounted reports whether lf's old primary was read.
func sourceAccounted(lf *v1alpha1.FailoverRecord) bool {
	return lf.TransactionsLost != nil && !lf.SourceLossPending
}

// LossAccounted reports whether lf's loss is accounted in full: counted,
// with no site still to be read (SourceLossPending, AbandonedLossPending).
func LossAccounted(lf *v1alpha1.FailoverRecord) bool {
	return sourceAccounted(lf) && len(lf.AbandonedLossPending) == 0
}

// RecordReceivedLoss counts in lastFailover, at the failover's end, the
// transactions its candidates received and could not apply that the new
// primary lacks (Emergency.giveUpRelay): reported at once, not only once
// the old primary can be read. The old primary's own loss is still to be
// added (SourceLossPending, AccountLoss).
func RecordReceivedLoss(st *v1alpha1.MysqlFailoverGroupStatus, lost gtid.Set) {
	lf := st.LastFailover
	if lf == nil || lost.IsEmpty() {
		return
	}
	lf.ReceivedLostGtidSet = lost.String()
	addLoss(lf, lost)
	lf.SourceLossPending = true
	syncLastFailover(st)
}

// LossPendingFrom names the former primary of the last failover while
// its part of that failover's loss is still to be counted from its data
// (AccountLoss has not read it), "" when none: its data is the only record
// of what the failover lost, never cloned over meanwhile
// (topology.DecideReclone). Abandoned targets still to be read are listed
// apart (AbandonedLossPending).
func LossPendingFrom(st *v1alpha1.MysqlFailoverGroupStatus) string {
	lf := st.LastFailover
	if lf == nil || sourceAccounted(lf) || lf.From == lf.To {
		return ""
	}
	return lf.From
}
