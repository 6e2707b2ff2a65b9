package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A transactionsLost that is still a lower bound (a site to read, or a
// later failover that came first) is shown as "at least N", never as a
// final count. Before, a pending count of 2 printed "transactions lost: 2".
func TestStatusShowsAPendingLossAsALowerBound(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	at := metav1.NewTime(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	cases := []struct {
		name string
		rec  v1alpha1.FailoverRecord
		want string
	}{
		{"final", v1alpha1.FailoverRecord{TransactionsLost: n(3)}, "transactions lost: 3\n"},
		{"absent", v1alpha1.FailoverRecord{}, "transactions lost: not known yet"},
		{"the old primary unread", v1alpha1.FailoverRecord{TransactionsLost: n(2), SourceLossPending: true},
			"transactions lost: at least 2 (pending: a still to be read)"},
		{"an abandoned target unread", v1alpha1.FailoverRecord{TransactionsLost: n(2), AbandonedLossPending: []string{"c"}},
			"transactions lost: at least 2 (pending: c still to be read)"},
		{"overtaken by a later failover", v1alpha1.FailoverRecord{TransactionsLost: n(0), LossLowerBound: true},
			"transactions lost: at least 0 (a later failover"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			rec.From, rec.To, rec.Kind, rec.Time = "a", "b", v1alpha1.KindEmergency, at
			var out bytes.Buffer
			writeFailovers(&out, &v1alpha1.MysqlFailoverGroupStatus{LastFailover: &rec})
			if !strings.Contains(out.String(), tc.want) {
				t.Fatalf("got:\n%s\nwant it to contain %q", out.String(), tc.want)
			}
		})
	}
	var out bytes.Buffer
	old := v1alpha1.FailoverRecord{From: "a", To: "b", Kind: v1alpha1.KindEmergency, Time: at, TransactionsLost: n(1), LossLowerBound: true}
	last := v1alpha1.FailoverRecord{From: "b", To: "c", Kind: v1alpha1.KindEmergency, Time: at, TransactionsLost: n(0)}
	writeFailovers(&out, &v1alpha1.MysqlFailoverGroupStatus{LastFailover: &last, FailoverHistory: []v1alpha1.FailoverRecord{old, last}})
	if !strings.Contains(out.String(), "a -> b at") || !strings.Contains(out.String(), "at least 1") {
		t.Fatalf("an earlier failover's lower bound is not shown:\n%s", out.String())
	}
}

// TestStatusShowsPrimaryFailingSinceAndProgressing: status prints when the
// primary began failing, and the Progressing condition with the others.
func TestStatusShowsPrimaryFailingSinceAndProgressing(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"}}
	g.Status.PrimaryFailingSince = &at
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonFailoverRunning, LastTransitionTime: at, Message: "emergency failover a -> b at step Fencing"}}
	var out bytes.Buffer
	if err := WriteStatus(&out, g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Primary failing since:", "2026-11-24T06:00:00Z", "Progressing", "FailoverRunning"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	g.Status.PrimaryFailingSince = nil
	out.Reset()
	_ = WriteStatus(&out, g)
	if strings.Contains(out.String(), "Primary failing since") {
		t.Errorf("a healthy primary is shown failing:\n%s", out.String())
	}
}
