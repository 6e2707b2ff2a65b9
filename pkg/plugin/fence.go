package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Fence adds site to the group's fenced-sites annotation. The operator then
// never promotes it; if it is the active site, it is made read-only and the
// group waits, without promoting another site, until it is unfenced.
func Fence(ctx context.Context, c client.Client, ns, name, site string, w io.Writer) error {
	changed, g, err := editFenced(ctx, c, ns, name, site, addEntry)
	if err != nil {
		return err
	}
	switch {
	case !changed:
		_, err = fmt.Fprintf(w, "%s/%s: site %s is already fenced\n", ns, name, site)
	case site == g.Status.ActiveSite:
		_, err = fmt.Fprintf(w, "%s/%s: fenced site %s, the ACTIVE site: it is made read-only and writes stop "+
			"until it is unfenced; no other site is promoted\n", ns, name, site)
	default:
		_, err = fmt.Fprintf(w, "%s/%s: fenced site %s: it will not be promoted\n", ns, name, site)
	}
	return wrapWrite(err)
}

// Unfence removes site from the group's fenced-sites annotation (and the
// annotation when no site is left). A fenced active site is made writable
// again by the operator's re-assertion.
func Unfence(ctx context.Context, c client.Client, ns, name, site string, w io.Writer) error {
	changed, _, err := editFenced(ctx, c, ns, name, site, removeEntry)
	if err != nil {
		return err
	}
	if !changed {
		_, err = fmt.Fprintf(w, "%s/%s: site %s was not fenced\n", ns, name, site)
	} else {
		_, err = fmt.Fprintf(w, "%s/%s: unfenced site %s\n", ns, name, site)
	}
	return wrapWrite(err)
}

// maxConflicts bounds the re-reads when someone else changed the group meanwhile.
const maxConflicts = 5

// editFenced applies edit to the annotation's value with an optimistic lock,
// re-reading on conflicts. It reports whether the value changed.
func editFenced(ctx context.Context, c client.Client, ns, name, site string,
	edit func(value, site string) (string, bool)) (bool, *v1alpha1.MysqlFailoverGroup, error) {
	for range maxConflicts {
		g, err := getGroup(ctx, c, ns, name)
		if err != nil {
			return false, nil, err
		}
		if err := checkSite(g, site); err != nil {
			return false, nil, err
		}
		value, changed := edit(g.Annotations[v1alpha1.FencedSitesAnnotation], site)
		if !changed {
			return false, g, nil
		}
		base := g.DeepCopy()
		setAnnotation(g, v1alpha1.FencedSitesAnnotation, value)
		err = c.Patch(ctx, g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return true, g, nil
		}
		if !apierrors.IsConflict(err) {
			return false, nil, fmt.Errorf("annotate %s/%s: %w", ns, name, err)
		}
	}
	return false, nil, fmt.Errorf("annotate %s/%s: still conflicting after %d tries", ns, name, maxConflicts)
}

// setAnnotation sets key to value, or removes it when value is empty.
func setAnnotation(g *v1alpha1.MysqlFailoverGroup, key, value string) {
	if value == "" {
		delete(g.Annotations, key)
		return
	}
	if g.Annotations == nil {
		g.Annotations = map[string]string{}
	}
	g.Annotations[key] = value
}

// entries splits the annotation's value, dropping empty entries.
func entries(value string) []string {
	var out []string
	for e := range strings.SplitSeq(value, ",") {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// addEntry appends site unless the value names it already.
func addEntry(value, site string) (string, bool) {
	es := entries(value)
	if slices.Contains(es, site) {
		return value, false
	}
	return strings.Join(append(es, site), ","), true
}

// removeEntry drops every mention of site, keeping the other entries in order.
func removeEntry(value, site string) (string, bool) {
	es := entries(value)
	kept := slices.DeleteFunc(slices.Clone(es), func(e string) bool { return e == site })
	if len(kept) == len(es) {
		return value, false
	}
	return strings.Join(kept, ","), true
}

func wrapWrite(err error) error {
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
