package plugin

import (
	"context"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// RestartInPlace asks the operator to have site's sidecar re-execute its
// own binary in place (the restart-inplace annotation): the same swap as
// an in-place upgrade, with nothing changed, to show that mysqld keeps
// running through it. Only the operator may ask a sidecar for that (its
// certificate), so the plugin asks the operator. It refuses an unknown
// site and a group that already carries such a request.
func RestartInPlace(ctx context.Context, c client.Client, ns, name, site string, w io.Writer) error {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := checkSite(g, site); err != nil {
		return err
	}
	if v, ok := g.Annotations[v1alpha1.RestartInPlaceAnnotation]; ok {
		return fmt.Errorf("%s/%s carries %s=%q: %w", ns, name, v1alpha1.RestartInPlaceAnnotation, v, ErrRestartPending)
	}
	base := g.DeepCopy()
	setAnnotation(g, v1alpha1.RestartInPlaceAnnotation, site)
	if err := c.Patch(ctx, g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("annotate %s/%s with %s=%s: %w", ns, name, v1alpha1.RestartInPlaceAnnotation, site, err)
	}
	_, err = fmt.Fprintf(w, "asked the operator to re-execute the sidecar of %s in place; watch for the SidecarUpgraded event\n", site)
	return wrapWrite(err)
}
