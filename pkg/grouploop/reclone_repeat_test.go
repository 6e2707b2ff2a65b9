package grouploop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// rejoinedWorld is c recloned with "c:confirm=orders" and rejoined,
// replicating like b.
func rejoinedWorld(t *testing.T) *recloneWorld {
	w := runningWorld(t, v1alpha1.RecoveryRejoined)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		r := failover.SiteRecord(st, "c")
		r.DivergentGtid, r.Recovery.DivergentGtid, r.Recovery.Request = "", "", "c:confirm=orders"
	})
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
		Replication: topology.Replication{Running: true}}
	return w
}

// TestRecloneAskedAgainAfterItsRejoin: weeks after c was recloned with
// "c:confirm=orders" and rejoined, a person asks again with the only value
// the confirm form allows. It is a new request: judged and run, never
// dropped without a word as the old request's leftover.
func TestRecloneAskedAgainAfterItsRejoin(t *testing.T) {
	w := rejoinedWorld(t)
	w.annotate("c:confirm=orders")
	w.pass()
	g := readGroup(t, w.cl)
	if _, still := g.Annotations[v1alpha1.RecloneSiteAnnotation]; still {
		t.Fatal("request not removed")
	}
	r := w.recovery()
	if r.Phase != v1alpha1.RecoveryRequested {
		t.Fatalf("the second request was not run: recovery %s (%s), rejection %+v", r.Phase, r.Message, g.Status.LastRecloneRejection)
	}
	if evs := strings.Join(w.events(), "\n"); !strings.Contains(evs, "Normal RecloneRequested") {
		t.Fatalf("events %q", evs)
	}
}

// TestRecloneLeftoverThisProcessFailedToRemove: the accepted request's
// removal fails on every pass until the reclone rejoined. The leftover is
// then only removed, not run a second time: this process knows it failed
// to remove it.
func TestRecloneLeftoverThisProcessFailedToRemove(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryCatchingUp)
	w.rec.after = 1 // the sidecar's CatchingUp is done at once
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		r := failover.SiteRecord(st, "c")
		r.DivergentGtid, r.Recovery.DivergentGtid, r.Recovery.Request = "", "", "c:confirm=orders"
	})
	refuse := false
	w.cl = interceptor.NewClient(w.cl.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if refuse {
				return errors.New("the API server refuses the annotation's removal")
			}
			return c.Patch(ctx, obj, patch, opts...)
		}})
	w.l = w.loop()
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
		Replication: topology.Replication{Running: true}}
	w.annotate("c:confirm=orders")
	refuse = true
	w.pass() // the leftover's removal fails; c caught up: Rejoined
	refuse = false
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryRejoined {
		t.Fatalf("recovery %s (%s)", r.Phase, r.Message)
	}
	if got := readGroup(t, w.cl).Annotations[v1alpha1.RecloneSiteAnnotation]; got != "c:confirm=orders" {
		t.Fatalf("annotation %q: the removal was meant to fail", got)
	}
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryRejoined {
		t.Fatalf("the leftover ran a second reclone: %s (%s)", r.Phase, r.Message)
	}
	if got := readGroup(t, w.cl).Annotations[v1alpha1.RecloneSiteAnnotation]; got != "" {
		t.Fatalf("the leftover is still there: %q", got)
	}
}
