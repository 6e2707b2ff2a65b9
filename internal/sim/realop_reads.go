package sim

import (
	"context"
	"reflect"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readCache keeps the last read of each Node and node Lease, which the
// loop reads on every pass while a Pod is gone (its kubelet's heartbeat)
// and which change every ten steps at most. The fake client answers a
// read by rendering the stored object to JSON and back; a read of an
// object not written since its last read is answered with a copy of that
// read's result, which is what the fake client would give again. Every
// write of an object, through the client, forgets its entry; the
// tracker is written directly only for the group (fastGroup).
type readCache struct {
	mu   sync.Mutex // the loop may read from several goroutines
	objs map[readKey]client.Object
}

type readKey struct {
	kind reflect.Type
	key  client.ObjectKey
}

func newReadCache() *readCache { return &readCache{objs: map[readKey]client.Object{}} }

// cached reports whether reads of o's kind are kept.
func cached(o client.Object) bool {
	switch o.(type) {
	case *corev1.Node, *coordinationv1.Lease:
		return true
	}
	return false
}

// get reads key into o through c, or from the cache; handled is false
// for reads it leaves to the caller.
func (rc *readCache) get(ctx context.Context, c client.Client, key client.ObjectKey, o client.Object,
	opts ...client.GetOption) (handled bool, err error) {
	if !cached(o) || len(opts) > 0 {
		return false, nil
	}
	k := readKey{kind: reflect.TypeOf(o), key: key}
	rc.mu.Lock()
	got, ok := rc.objs[k]
	rc.mu.Unlock()
	if ok {
		reflect.ValueOf(o).Elem().Set(reflect.ValueOf(got.DeepCopyObject()).Elem())
		return true, nil
	}
	if err := c.Get(ctx, key, o); err != nil {
		return true, err // not kept: an error is answered afresh
	}
	rc.mu.Lock()
	rc.objs[k] = o.DeepCopyObject().(client.Object)
	rc.mu.Unlock()
	return true, nil
}

// forget drops o's entry: o is being written.
func (rc *readCache) forget(o client.Object) {
	if cached(o) {
		rc.mu.Lock()
		delete(rc.objs, readKey{kind: reflect.TypeOf(o), key: client.ObjectKeyFromObject(o)})
		rc.mu.Unlock()
	}
}

// forgetAll drops every entry: a write of many objects.
func (rc *readCache) forgetAll() {
	rc.mu.Lock()
	clear(rc.objs)
	rc.mu.Unlock()
}
