package failover

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// AccountLoss fills lastFailover.transactionsLost and lostGtidSet from the
// old primary's executed set, read once it is reachable again: whatever it
// executed that the target did not hold when it was promoted (gtid.Lacks), except the
// target's own transactions written since. It does
// nothing, and returns false, when the loss is already accounted or there is
// nothing to account it against.
func AccountLoss(st *v1alpha1.MysqlFailoverGroupStatus, fromExecuted gtid.Set) bool {
	lf := st.LastFailover
	if lf == nil || LossAccounted(lf) || st.Failover != nil {
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
	n := int64(lost.Count())
	lf.TransactionsLost, lf.SourceLossPending = &n, false
	lf.LostGtidSet = lost.String()
	syncLastFailover(st)
	return true
}

// LossAccounted reports whether lf's loss is accounted in full: counted,
// and not only what its candidates received and could not apply
// (SourceLossPending).
func LossAccounted(lf *v1alpha1.FailoverRecord) bool {
	return lf.TransactionsLost != nil && !lf.SourceLossPending
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
	n := int64(lost.Count())
	lf.ReceivedLostGtidSet, lf.LostGtidSet, lf.TransactionsLost = lost.String(), lost.String(), &n
	lf.SourceLossPending = true
	syncLastFailover(st)
}

// LossPendingFrom names the former primary of the last failover while
// that failover's loss is still to be counted from its data (AccountLoss
// has not run), "" when none: its data is the only record of what the
// failover lost, never cloned over meanwhile (topology.DecideReclone).
func LossPendingFrom(st *v1alpha1.MysqlFailoverGroupStatus) string {
	lf := st.LastFailover
	if lf == nil || LossAccounted(lf) || lf.From == lf.To {
		return ""
	}
	return lf.From
}
