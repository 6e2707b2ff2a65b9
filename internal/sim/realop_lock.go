package sim

import (
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The loop writes status with client.MergeFromWithOptimisticLock: the
// patch it sends carries the resourceVersion of the object it was computed
// from, and the sim's fast path (fastGroup.patchStatus) needs only that
// version. Rendering the patch to read it back marshals both objects and
// diffs them as JSON, which cost a fifth of a real-operator run; the
// version is the base object's, so lockVersion reads it from the patch
// directly.

// mergeFromPatchType is the type controller-runtime's merge patches have.
var mergeFromPatchType = reflect.TypeOf(client.MergeFromWithOptions(&v1alpha1.MysqlFailoverGroup{},
	client.MergeFromWithOptimisticLock{}))

// lockVersion is the resourceVersion an optimistic-lock merge patch of a
// group carries, as patch.Data would render it; ok is false for any
// other patch (no lock, another object, or a controller-runtime whose
// patch no longer looks the way this reads it): those are rendered.
func lockVersion(patch client.Patch) (version string, ok bool) {
	v := reflect.ValueOf(patch)
	if patch == nil || v.Type() != mergeFromPatchType || v.IsNil() || patch.Type() != types.MergePatchType {
		return "", false
	}
	s := v.Elem()
	opts, from := s.FieldByName("opts"), s.FieldByName("from")
	if !opts.IsValid() || !from.IsValid() || from.Kind() != reflect.Interface || from.IsNil() {
		return "", false
	}
	lock := opts.FieldByName("OptimisticLock")
	if !lock.IsValid() || lock.Kind() != reflect.Bool || !lock.Bool() {
		return "", false
	}
	base := from.Elem()
	if base.Type() != reflect.TypeFor[*v1alpha1.MysqlFailoverGroup]() || base.IsNil() {
		return "", false
	}
	// String works on a field read through an unexported one.
	version = base.Elem().FieldByName("ObjectMeta").FieldByName("ResourceVersion").String()
	// An empty version makes Data fail: leave that to Data.
	return version, version != ""
}
