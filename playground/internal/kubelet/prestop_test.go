package kubelet

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestRunPreStop(t *testing.T) {
	exec := func(h *corev1.LifecycleHandler) *corev1.LifecycleHandler { return h }
	execHook := exec(&corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"stop", "now"}}})
	httpHook := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/lifecycle/stop"}}
	block := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name      string
		hook      *corev1.LifecycleHandler
		grace     time.Duration
		took      time.Duration // how long the hook runs; -1: until cancelled
		exitAfter time.Duration // the process exits by itself after this; 0: never
		ran       bool
		leftMin   time.Duration
		leftMax   time.Duration
		wantErr   bool
	}{
		{"no hook: the whole grace for SIGTERM", nil, 3 * time.Second, 0, 0, false, 3 * time.Second, 3 * time.Second, false},
		{"a kill runs no hook", execHook, 0, 0, 0, false, 0, 0, false},
		{"an exec hook runs first, its time taken from the grace", execHook, 5 * time.Second, 300 * time.Millisecond, 0,
			true, 4 * time.Second, 4750 * time.Millisecond, false},
		{"an httpGet hook runs first", httpHook, 5 * time.Second, 100 * time.Millisecond, 0,
			true, 4 * time.Second, 4950 * time.Millisecond, false},
		{"a hook that outlasts the grace is cut, and SIGTERM still gets two seconds", execHook, 500 * time.Millisecond, -1, 0,
			true, minGraceAfterHook, minGraceAfterHook, true},
		{"the process exits during the hook: the hook is cut", httpHook, 10 * time.Second, -1, 200 * time.Millisecond,
			true, 9 * time.Second, 9900 * time.Millisecond, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			act := func(ctx context.Context, what string) error {
				ran = append(ran, what)
				if tc.took < 0 {
					return block(ctx)
				}
				time.Sleep(tc.took)
				return nil
			}
			f := hookFuncs{
				exec: func(ctx context.Context, argv []string) error {
					if !slices.Equal(argv, []string{"stop", "now"}) {
						return errors.New("wrong argv")
					}
					return act(ctx, "exec")
				},
				http: func(ctx context.Context, g *corev1.HTTPGetAction) error { return act(ctx, g.Path) },
			}
			exited := make(chan struct{})
			if tc.exitAfter > 0 {
				time.AfterFunc(tc.exitAfter, func() { close(exited) })
			}
			left, err := runPreStop(tc.hook, tc.grace, f, exited)
			if (len(ran) > 0) != tc.ran || (err != nil) != tc.wantErr {
				t.Fatalf("ran %v, err %v; want ran %v, error %v", ran, err, tc.ran, tc.wantErr)
			}
			if left < tc.leftMin || left > tc.leftMax {
				t.Fatalf("grace left %s, want %s to %s", left, tc.leftMin, tc.leftMax)
			}
		})
	}
}
