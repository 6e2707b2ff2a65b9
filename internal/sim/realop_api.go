package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// groupResource is where the fake client's tracker keeps the group.
var groupResource = v1alpha1.GroupVersion.WithResource("mysqlfailovergroups")

// fastGroup serves the group's reads and its optimistic status patches
// straight from the tracker, typed: the fake client round-trips every
// object through JSON, and the loop reads and writes the group on every
// pass. The semantics the loop relies on are kept: a read is a copy of
// what is stored; a status patch that carries the resourceVersion it was
// computed from (client.MergeFromWithOptimisticLock, the only kind the
// loop sends) fails with Conflict unless that is the stored version, and
// otherwise changes status alone and the version. Any other patch goes
// the fake client's way.
type fastGroup struct {
	tracker clienttesting.ObjectTracker
	key     types.NamespacedName
	reads   *readCache // Nodes and Leases (realop_reads.go)
}

// get copies the stored group into g.
func (f fastGroup) get(g *v1alpha1.MysqlFailoverGroup) error {
	o, err := f.tracker.Get(groupResource, f.key.Namespace, f.key.Name)
	if err != nil {
		return err
	}
	*g = *o.(*v1alpha1.MysqlFailoverGroup) // the tracker hands out a copy
	stripMono(reflect.ValueOf(g))          // the API server keeps wall clocks only
	return nil
}

// patchStatus applies an optimistic status patch; handled is false for
// patches it leaves to the fake client.
func (f fastGroup) patchStatus(g *v1alpha1.MysqlFailoverGroup, patch client.Patch) (bool, error) {
	if patch.Type() != types.MergePatchType {
		return false, nil
	}
	var lock struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if v, ok := lockVersion(patch); ok {
		lock.Metadata.ResourceVersion = v // what Data would carry (realop_lock.go)
	} else {
		data, err := patch.Data(g)
		if err != nil {
			return true, fmt.Errorf("sim status patch: %w", err)
		}
		if err := json.Unmarshal(data, &lock); err != nil || lock.Metadata.ResourceVersion == "" {
			return false, nil
		}
	}
	cur := &v1alpha1.MysqlFailoverGroup{}
	if err := f.get(cur); err != nil {
		return true, err
	}
	if cur.ResourceVersion != lock.Metadata.ResourceVersion {
		return true, apierrors.NewConflict(groupResource.GroupResource(), f.key.Name,
			fmt.Errorf("the object has been modified: resourceVersion %s, patch from %s", cur.ResourceVersion, lock.Metadata.ResourceVersion))
	}
	rv, err := strconv.ParseUint(cur.ResourceVersion, 10, 64)
	if err != nil {
		return true, fmt.Errorf("sim status patch: resourceVersion %q: %w", cur.ResourceVersion, err)
	}
	// The version matched: status is what the writer computed its patch
	// from, so applying the patch gives the writer's status exactly.
	// The tracker stores a copy, and cur is a copy the tracker gave: g
	// shares nothing with what is stored.
	cur.Status = g.Status
	stripMono(reflect.ValueOf(&cur.Status)) // the API server keeps wall clocks only
	cur.ResourceVersion = strconv.FormatUint(rv+1, 10)
	if err := f.tracker.Update(groupResource, cur, f.key.Namespace); err != nil {
		return true, err
	}
	*g = *cur
	return true, nil
}

// statusPatch is the interceptor's status patch: the fast way when it can.
func (f fastGroup) statusPatch(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch,
	opts ...client.SubResourcePatchOption) error {
	if g, ok := o.(*v1alpha1.MysqlFailoverGroup); ok && sub == "status" && len(opts) == 0 {
		if handled, err := f.patchStatus(g, p); handled {
			return err
		}
	}
	return c.SubResource(sub).Patch(ctx, o, p, opts...)
}

var (
	podResource = corev1.SchemeGroupVersion.WithResource("pods")
	podKind     = corev1.SchemeGroupVersion.WithKind("Pod")
)

// listPods lists Pods from the tracker, typed, filtered as the options
// say (namespace and label selector, all the loop uses); handled is false
// for lists it leaves to the fake client.
func (f fastGroup) listPods(list client.ObjectList, opts ...client.ListOption) (bool, error) {
	pods, ok := list.(*corev1.PodList)
	if !ok {
		return false, nil
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	if lo.FieldSelector != nil || lo.Limit != 0 || lo.Continue != "" {
		return false, nil
	}
	o, err := f.tracker.List(podResource, podKind, lo.Namespace)
	if err != nil {
		return true, err
	}
	all := o.(*corev1.PodList) // a copy: filtered in place
	items := all.Items[:0]
	for _, p := range all.Items {
		if lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(p.Labels)) {
			items = append(items, p)
		}
	}
	pods.Items = items
	return true, nil
}
