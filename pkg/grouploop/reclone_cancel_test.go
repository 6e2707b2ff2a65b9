package grouploop

import (
	"context"
	"errors"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRecloneCancelKeptUntilPersisted: a person cancels c's reclone while
// the API server refuses status writes. The cancel is not in status, so
// the request must stay: removed, the reclone would go on (to Cloning)
// with the person's cancel gone. Once status writes succeed the cancel
// takes effect and only then is the request removed.
func TestRecloneCancelKeptUntilPersisted(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryRequested)
	refuse := false
	w.cl = interceptor.NewClient(w.cl.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			if refuse {
				return errors.New("the API server refuses status writes")
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}})
	w.l = w.loop()
	w.annotate("c:cancel")
	refuse = true
	w.pass()
	refuse = false
	g := readGroup(t, w.cl)
	if got := g.Annotations[v1alpha1.RecloneSiteAnnotation]; got != "c:cancel" {
		t.Fatalf("the cancel request was removed although it is not in status (annotation %q, recovery %+v)",
			got, w.recovery())
	}
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneCancelled {
		t.Fatalf("recovery %+v, want Failed/Cancelled", r)
	}
	if got := readGroup(t, w.cl).Annotations[v1alpha1.RecloneSiteAnnotation]; got != "" {
		t.Fatalf("the answered cancel is left: %q", got)
	}
}
