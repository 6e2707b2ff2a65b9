//go:build envtest

package controller_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/controller"
)

// gatedReader is the API reader the loops read their group through; while
// held, a read of the group blocks, whatever its context says, until the
// hold is let go: a loop stuck in a call that ignores its deadline.
type gatedReader struct {
	client.Reader
	mu   sync.Mutex
	gate chan struct{} // nil: reads pass
}

func (r *gatedReader) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate == nil {
		r.gate = make(chan struct{})
	}
}

func (r *gatedReader) letGo() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate != nil {
		close(r.gate)
		r.gate = nil
	}
}

func (r *gatedReader) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if _, ok := o.(*v1alpha1.MysqlFailoverGroup); ok {
		r.mu.Lock()
		gate := r.gate
		r.mu.Unlock()
		if gate != nil {
			<-gate
		}
	}
	return r.Reader.Get(ctx, key, o, opts...)
}

// The leader is not Ready until its loop has read the group; once it has,
// it is.
func TestReadyWaitsForEveryGroup(t *testing.T) {
	e := newEnv(t, "iad", "pdx")
	e.createGroup(nil)
	gr := &gatedReader{}
	gr.hold()
	t.Cleanup(gr.letGo)
	run := e.startOperatorWith(func(d *controller.Deps, _ *controller.Options) {
		gr.Reader = d.Reader
		d.Reader = gr
	})
	ctx := t.Context()
	// Started (this test's manager elects at once) but the loop's first
	// read hangs: not loaded.
	e.eventually(10*time.Second, "the operator starts and waits for the group",
		func() bool { return errors.Is(run.op.Ready(ctx), controller.ErrGroupsNotLoaded) })
	time.Sleep(3 * pollInterval)
	if err := run.op.Ready(ctx); !errors.Is(err, controller.ErrGroupsNotLoaded) {
		t.Fatalf("Ready before the group was read: %v", err)
	}
	gr.letGo()
	took := e.eventually(5*time.Second, "ready once the group is read", func() bool { return run.op.Ready(ctx) == nil })
	t.Logf("ready %s after the read was let go", took)
}

// A loop that completes no pass for longer than the stall limit fails
// Healthy, naming the group; when it passes again, Healthy is nil again.
func TestHealthyFailsOnAHungLoop(t *testing.T) {
	e := newEnv(t, "iad", "pdx")
	e.createGroup(nil)
	gr := &gatedReader{}
	t.Cleanup(gr.letGo)
	const limit = 1500 * time.Millisecond
	run := e.startOperatorWith(func(d *controller.Deps, o *controller.Options) {
		gr.Reader = d.Reader
		d.Reader = gr
		o.StallTimeout = limit
	})
	ctx := t.Context()
	e.eventually(10*time.Second, "ready", func() bool { return run.op.Ready(ctx) == nil })
	// Healthy through a few passes.
	for range 4 {
		if err := run.op.Healthy(); err != nil {
			t.Fatalf("healthy loop: %v", err)
		}
		time.Sleep(limit / 3)
	}
	gr.hold()
	hung := time.Now()
	e.eventually(limit+5*time.Second, "unhealthy", func() bool { return errors.Is(run.op.Healthy(), controller.ErrLoopStalled) })
	if d := time.Since(hung); d < limit-pollInterval {
		t.Fatalf("unhealthy %s after the loop hung, before the %s limit", d, limit)
	}
	t.Logf("unhealthy: %v", run.op.Healthy())
	gr.letGo()
	e.eventually(5*time.Second, "healthy again", func() bool { return run.op.Healthy() == nil })
	if err := run.op.Ready(ctx); err != nil {
		t.Fatalf("readiness, once reached, is kept: %v", err)
	}
}
