package failover

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Issue 13, path 3: a second failover overwrote lastFailover, and the
// first failover's loss vanished from status and from Decide's input.
func TestFailoverHistoryKeepsEveryLoss(t *testing.T) {
	st := &v1alpha1.MysqlFailoverGroupStatus{TopologyGeneration: 2, PromotionGtidExecuted: uuidA + ":1-10"}
	t1 := metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	RecordFailover(st, v1alpha1.FailoverRecord{Time: t1, From: "a", To: "b", Kind: v1alpha1.KindEmergency})
	if !AccountLoss(st, gtid.MustParseSet(uuidA+":1-15")) {
		t.Fatal("loss not accounted")
	}
	st.TopologyGeneration, st.PromotionGtidExecuted = 3, uuidA+":1-10,"+uuidB+":1-5"
	t2 := metav1.NewTime(t1.Add(time.Hour))
	RecordFailover(st, v1alpha1.FailoverRecord{Time: t2, From: "b", To: "c", Kind: v1alpha1.KindEmergency})

	if len(st.FailoverHistory) != 2 || st.LastFailover == nil || st.LastFailover.To != "c" || st.LastFailover.Generation != 3 {
		t.Fatalf("status %+v", st)
	}
	first := st.FailoverHistory[0]
	if first.Generation != 2 || first.TransactionsLost == nil || *first.TransactionsLost != 5 ||
		first.LostGtidSet != uuidA+":11-15" {
		t.Fatalf("first failover's loss: %+v", first)
	}
	h := History(st)
	if len(h) != 2 || !h[0].Lost.Equal(gtid.MustParseSet(uuidA+":11-15")) || h[1].To != "c" || !h[1].Lost.IsEmpty() {
		t.Fatalf("History = %+v", h)
	}
	if !Promoted(st).Equal(gtid.MustParseSet(uuidA + ":1-10," + uuidB + ":1-5")) {
		t.Fatalf("Promoted = %s", Promoted(st))
	}
}

func TestFailoverHistoryIsBounded(t *testing.T) {
	st := &v1alpha1.MysqlFailoverGroupStatus{}
	for i := range v1alpha1.MaxFailoverHistory + 5 {
		st.TopologyGeneration = int64(i + 2)
		RecordFailover(st, v1alpha1.FailoverRecord{From: "a", To: "b", Kind: v1alpha1.KindPlanned})
	}
	if n := len(st.FailoverHistory); n != v1alpha1.MaxFailoverHistory || v1alpha1.MaxFailoverHistory < 10 {
		t.Fatalf("%d entries kept, bound %d", n, v1alpha1.MaxFailoverHistory)
	}
	if got := st.FailoverHistory[len(st.FailoverHistory)-1].Generation; got != int64(v1alpha1.MaxFailoverHistory+6) {
		t.Fatalf("newest generation %d", got)
	}
}

func TestHistoryFromAnOlderStatus(t *testing.T) {
	lost := int64(2)
	st := &v1alpha1.MysqlFailoverGroupStatus{TopologyGeneration: 4, LastFailover: &v1alpha1.FailoverRecord{From: "a", To: "b",
		Kind: v1alpha1.KindEmergency, TransactionsLost: &lost, LostGtidSet: uuidA + ":9-10"}}
	h := History(st)
	if len(h) != 1 || h[0].Generation != 4 || !h[0].Lost.Equal(gtid.MustParseSet(uuidA+":9-10")) {
		t.Fatalf("History = %+v", h)
	}
	if History(&v1alpha1.MysqlFailoverGroupStatus{}) != nil {
		t.Fatal("history of a group that never failed over")
	}
}
