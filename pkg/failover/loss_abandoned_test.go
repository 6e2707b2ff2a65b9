package failover

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// An emergency failover a -> b was first aimed at c, whose promotion took
// effect though its answer was lost: c wrote C:1-3 before its fence, and
// b received C:1. What b never received (C:2-3) is lost, and counts in
// transactionsLost with the old primary's tail, each part once read.
// Before, c's part was marked divergent only, and transactionsLost said 2.
func TestAccountAbandonedLoss(t *testing.T) {
	const uuidC = "cccccccc-0000-0000-0000-000000000003"
	status := func() v1alpha1.MysqlFailoverGroupStatus {
		lf := v1alpha1.FailoverRecord{Time: metav1.NewTime(t0), From: "a", To: "b", Kind: v1alpha1.KindEmergency,
			Abandoned: []string{"c"}, AbandonedLossPending: []string{"c"}}
		return v1alpha1.MysqlFailoverGroupStatus{LastFailover: &lf, FailoverHistory: []v1alpha1.FailoverRecord{lf},
			PromotionGtidExecuted: uuidA + ":1-8," + uuidC + ":1",
			Sites: []v1alpha1.SiteStatus{{Name: "a", ServerID: uuidA}, {Name: "b", ServerID: uuidB},
				{Name: "c", ServerID: uuidC}}}
	}
	// c repointed at b since: b's writes and the old primary's are not c's part.
	cRead := gtid.MustParseSet(uuidA + ":1-9," + uuidB + ":1-4," + uuidC + ":1-3")
	aRead := gtid.MustParseSet(uuidA + ":1-10")
	type step struct {
		site    string // "a" for the old primary
		pending bool
		lost    int64
		set     string
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"the abandoned target first, then the old primary", []step{
			{"c", true, 2, uuidC + ":2-3"},
			{"a", false, 4, uuidA + ":9-10," + uuidC + ":2-3"}}},
		{"the old primary first: its count is a lower bound until c is read", []step{
			{"a", true, 2, uuidA + ":9-10"},
			{"c", false, 4, uuidA + ":9-10," + uuidC + ":2-3"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := status()
			for _, s := range tc.steps {
				var ok bool
				if s.site == "a" {
					ok = AccountLoss(&st, aRead)
				} else {
					ok = AccountAbandonedLoss(&st, s.site, cRead)
				}
				lf := st.LastFailover
				if !ok || lf.TransactionsLost == nil || *lf.TransactionsLost != s.lost || lf.LostGtidSet != s.set ||
					lf.LossPending() != s.pending {
					t.Fatalf("after reading %s: ok %v, %+v; want %d lost (%s), pending %v", s.site, ok, lf, s.lost, s.set, s.pending)
				}
				if h := st.FailoverHistory[0]; *h.TransactionsLost != s.lost || h.LossPending() != s.pending {
					t.Fatalf("after reading %s: history %+v not in step", s.site, h)
				}
			}
			if AccountAbandonedLoss(&st, "c", cRead) || AccountLoss(&st, aRead) {
				t.Fatal("a part was accounted twice")
			}
		})
	}
}

// A later failover recorded before the last one's loss was read in full
// leaves that loss a lower bound for good, said so in status rather than
// passing for final (it was absent, or a partial count that looked final).
func TestSupersededLossIsALowerBound(t *testing.T) {
	st := v1alpha1.MysqlFailoverGroupStatus{PromotionGtidExecuted: uuidA + ":1-8"}
	RecordFailover(&st, v1alpha1.FailoverRecord{Time: metav1.NewTime(t0), From: "a", To: "b", Kind: v1alpha1.KindEmergency})
	RecordReceivedLoss(&st, gtid.MustParseSet(uuidA+":9"))
	RecordFailover(&st, v1alpha1.FailoverRecord{Time: metav1.NewTime(t0.Add(1e9)), From: "b", To: "c", Kind: v1alpha1.KindEmergency})
	RecordFailover(&st, v1alpha1.FailoverRecord{Time: metav1.NewTime(t0.Add(2e9)), From: "c", To: "d", Kind: v1alpha1.KindEmergency})
	first, second := st.FailoverHistory[0], st.FailoverHistory[1]
	if !first.LossLowerBound || !first.LossPending() || *first.TransactionsLost != 1 {
		t.Fatalf("first failover %+v: want a lower bound of 1", first)
	}
	if !second.LossLowerBound || second.TransactionsLost == nil || *second.TransactionsLost != 0 {
		t.Fatalf("second failover %+v: want a lower bound of 0", second)
	}
	if st.LastFailover.LossLowerBound {
		t.Fatalf("the last failover %+v is still to be read, not a lower bound for good", st.LastFailover)
	}
}
