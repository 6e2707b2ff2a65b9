package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Errors the commands return, wrapped with the names involved.
var (
	// ErrUnknownGroup: no MysqlFailoverGroup of that name in the namespace.
	ErrUnknownGroup = errors.New("no such MysqlFailoverGroup")
	// ErrUnknownSite: the group's spec.sites has no site of that name.
	ErrUnknownSite = errors.New("no such site in the group")
	// ErrRequestPending: a planned failover is already asked for.
	ErrRequestPending = errors.New("a planned failover is already requested")
	// ErrRestartPending: a restart in place is already asked for.
	ErrRestartPending = errors.New("a restart in place is already requested")
	// ErrPlannedFailed: the planned failover ended in Failed.
	ErrPlannedFailed = errors.New("planned failover failed")
	// ErrRecloneActive: the active site's data is never cloned over.
	ErrRecloneActive = errors.New("the active site is never recloned")
	// ErrNotConfirmed: the person did not confirm the reclone.
	ErrNotConfirmed = errors.New("not confirmed")
)

// getGroup reads a group, with a clear error when there is none.
func getGroup(ctx context.Context, c client.Client, ns, name string) (*v1alpha1.MysqlFailoverGroup, error) {
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s/%s: %w", ns, name, ErrUnknownGroup)
		}
		return nil, fmt.Errorf("read MysqlFailoverGroup %s/%s: %w", ns, name, err)
	}
	return g, nil
}

// siteNames lists the group's sites in spec order.
func siteNames(g *v1alpha1.MysqlFailoverGroup) []string {
	out := make([]string, len(g.Spec.Sites))
	for i, s := range g.Spec.Sites {
		out[i] = s.Name
	}
	return out
}

// checkSite fails with ErrUnknownSite, naming the group's sites, when site is not one of them.
func checkSite(g *v1alpha1.MysqlFailoverGroup, site string) error {
	names := siteNames(g)
	if slices.Contains(names, site) {
		return nil
	}
	return fmt.Errorf("%q in %s/%s (sites: %s): %w", site, g.Namespace, g.Name, strings.Join(names, ", "), ErrUnknownSite)
}
