package grouploop

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneKeepsTheOldPrimarysUncountedLoss: c was the primary; an
// emergency failover promoted a at 0-1:1-10 while c could not be read, so
// c's tail (acknowledged to clients) is lost and lastFailover waits to
// count it until c is read. c never answered since (its mysqld
// crash-loops: why a person asks for a reclone), so it is not marked
// diverged and the confirm form fits. Cloned over, c would hold b's set
// when next read, and the loss would be counted as 0: the tail gone,
// never preserved nor counted. The request is refused (LossUncounted),
// recorded, reported and removed, until c has been read.
func TestRecloneKeepsTheOldPrimarysUncountedLoss(t *testing.T) {
	tests := []struct {
		name  string
		c     topology.SiteView
		bDown bool
	}{
		{name: "operator restarted: c's last set unknown", c: topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable}},
		{name: "c's lost tail known, b down: no other copy to wait for", bDown: true,
			c: topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable, Executed: mustSet(t, "0-1:1-15")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newRecloneWorld(t)
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				failover.SiteRecord(st, "c").DivergentGtid = ""
				st.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(t0.Add(-600e9)), From: "c", To: "a",
					Kind: v1alpha1.KindEmergency, Generation: 4, SourceLossPending: true}
				st.PromotionGtidExecuted = "0-1:1-10"
			})
			w.views["c"] = tc.c
			if tc.bDown {
				w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateUnreachable, Executed: mustSet(t, "0-1:1-10")}
			}
			w.annotate("c:confirm=orders")
			for range 6 {
				w.pass()
			}
			g := readGroup(t, w.cl)
			if r := w.recovery(); r.Phase != "" {
				t.Fatalf("c, the old primary whose loss is not counted yet, has a reclone in %s: %s", r.Phase, r.Message)
			}
			rej := g.Status.LastRecloneRejection
			if rej == nil || rej.Reason != v1alpha1.ReasonRecloneLossUncounted || rej.Request != "c:confirm=orders" {
				t.Fatalf("lastRecloneRejection %+v", rej)
			}
			if _, still := g.Annotations[v1alpha1.RecloneSiteAnnotation]; still {
				t.Fatal("the refused request was left in place")
			}
			if evs := strings.Join(w.events(), "\n"); !strings.Contains(evs, "Warning RecloneRejected") {
				t.Fatalf("events %q", evs)
			}
		})
	}
}

// TestRecloneOfTheOldPrimaryOnceItsLossIsCounted: once c was read and the
// failover's loss counted, the same request is accepted.
func TestRecloneOfTheOldPrimaryOnceItsLossIsCounted(t *testing.T) {
	w := newRecloneWorld(t)
	lost := int64(5)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		failover.SiteRecord(st, "c").DivergentGtid = ""
		st.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(t0.Add(-600e9)), From: "c", To: "a",
			Kind: v1alpha1.KindEmergency, Generation: 4, TransactionsLost: &lost, LostGtidSet: "0-1:11-15"}
		st.PromotionGtidExecuted = "0-1:1-10"
	})
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable}
	w.annotate("c:confirm=orders")
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryRequested {
		t.Fatalf("recovery %s (%s); rejection %+v", r.Phase, r.Message, readGroup(t, w.cl).Status.LastRecloneRejection)
	}
}
