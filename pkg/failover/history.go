package failover

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// RecordFailover records a completed failover: it becomes lastFailover and
// the newest entry of failoverHistory, which keeps the latest
// MaxFailoverHistory. The caller persists.
func RecordFailover(st *v1alpha1.MysqlFailoverGroupStatus, rec v1alpha1.FailoverRecord) {
	if rec.Generation == 0 {
		rec.Generation = st.TopologyGeneration
	}
	settleSuperseded(st)
	last := rec
	st.LastFailover = &last
	st.FailoverHistory = append(st.FailoverHistory, rec)
	if n := len(st.FailoverHistory) - v1alpha1.MaxFailoverHistory; n > 0 {
		st.FailoverHistory = append([]v1alpha1.FailoverRecord(nil), st.FailoverHistory[n:]...)
	}
}

// syncLastFailover copies lastFailover's loss into its failoverHistory entry.
func syncLastFailover(st *v1alpha1.MysqlFailoverGroupStatus) {
	lf := st.LastFailover
	if lf == nil || len(st.FailoverHistory) == 0 {
		return
	}
	h := &st.FailoverHistory[len(st.FailoverHistory)-1]
	if h.From == lf.From && h.To == lf.To && h.Time.Equal(&lf.Time) {
		h.TransactionsLost, h.LostGtidSet = lf.TransactionsLost, lf.LostGtidSet
		h.ReceivedLostGtidSet, h.SourceLossPending = lf.ReceivedLostGtidSet, lf.SourceLossPending
		h.Abandoned, h.AbandonedLossPending = lf.Abandoned, lf.AbandonedLossPending
		h.LossLowerBound = lf.LossLowerBound
	}
}

// settleSuperseded marks the last failover's loss a lower bound for good
// when a new failover is recorded before it was read in full: only the
// last failover's loss is read (its promotion set is the one status
// keeps), so what was still unread is never counted. transactionsLost
// then counts what was read, 0 when nothing was, and says it is a lower
// bound (LossLowerBound) rather than passing for final.
func settleSuperseded(st *v1alpha1.MysqlFailoverGroupStatus) {
	lf := st.LastFailover
	if lf == nil || !lf.LossPending() || lf.LossLowerBound {
		return
	}
	if lf.TransactionsLost == nil {
		n := int64(0)
		lf.TransactionsLost = &n
	}
	lf.LossLowerBound = true
	syncLastFailover(st)
}

// History is status.failoverHistory as topology.Decide reads it, oldest
// first, each with its lost set: the cooldown counts the last failover of
// either kind, and no lost set is forgotten by a newer failover. A status
// written before failoverHistory existed gives its lastFailover alone.
func History(st *v1alpha1.MysqlFailoverGroupStatus) []topology.FailoverRecord {
	recs := st.FailoverHistory
	if len(recs) == 0 && st.LastFailover != nil {
		recs = []v1alpha1.FailoverRecord{*st.LastFailover}
	}
	out := make([]topology.FailoverRecord, 0, len(recs))
	for _, r := range recs {
		gen := r.Generation
		if gen == 0 {
			gen = st.TopologyGeneration
		}
		lost, _ := gtid.ParseSet(r.LostGtidSet) // a set that does not parse counts as empty
		out = append(out, topology.FailoverRecord{From: r.From, To: r.To, Time: r.Time.Time, Kind: r.Kind,
			Generation: gen, Lost: lost})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Promoted is status.promotionGtidExecuted as topology.Decide reads it;
// empty when unset or unparseable.
func Promoted(st *v1alpha1.MysqlFailoverGroupStatus) gtid.Set {
	set, _ := gtid.ParseSet(st.PromotionGtidExecuted)
	return set
}

// PromotedKnown reports whether Promoted is a recorded set (possibly
// empty: the target held nothing) rather than none recorded yet.
func PromotedKnown(st *v1alpha1.MysqlFailoverGroupStatus) bool {
	return st.PromotionRecorded || st.PromotionGtidExecuted != ""
}
