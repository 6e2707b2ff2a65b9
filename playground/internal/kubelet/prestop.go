package kubelet

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A container's preStop hook runs before its SIGTERM, as a kubelet runs it:
// the hook (exec, httpGet or sleep) gets the Pod's grace period, and the
// SIGTERM follows once it returns, failed or not, with what is left of the
// grace period (at least minGraceAfterHook, as the kubelet gives when a
// hook used it all). A kill (grace 0) runs no hook. The site Pods' mysqld
// container asks its sidecar to fence, drain and shut mysqld down in its
// hook (docs/upgrades.md, "Instance lifecycle"); without it the playground
// stopped mysqld by SIGTERM alone.

// minGraceAfterHook is the time the process gets after a hook that used
// the whole grace period.
const minGraceAfterHook = 2 * time.Second

// hookFuncs run a hook's actions inside the container.
type hookFuncs struct {
	exec func(ctx context.Context, argv []string) error
	http func(ctx context.Context, g *corev1.HTTPGetAction) error
}

// runPreStop runs h, bounded by grace and by exited (the process ended by
// itself), and returns the grace left for the SIGTERM.
func runPreStop(h *corev1.LifecycleHandler, grace time.Duration, f hookFuncs, exited <-chan struct{}) (time.Duration, error) {
	if h == nil || grace <= 0 {
		return grace, nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	var err error
	switch {
	case h.Exec != nil:
		err = f.exec(ctx, h.Exec.Command)
	case h.HTTPGet != nil:
		err = f.http(ctx, h.HTTPGet)
	case h.Sleep != nil:
		if !sleepCtx(ctx, time.Duration(h.Sleep.Seconds)*time.Second) && ctx.Err() != nil {
			err = ctx.Err()
		}
	default:
		err = errors.New("preStop: no action")
	}
	return max(grace-time.Since(start), minGraceAfterHook), err
}

// preStop runs the container's preStop hook before the process p is
// stopped, and returns the grace left.
func (c *container) preStop(grace time.Duration, exited <-chan struct{}) time.Duration {
	if c.init || c.spec.Lifecycle == nil || c.spec.Lifecycle.PreStop == nil {
		return grace
	}
	f := hookFuncs{exec: c.execProbe, http: c.httpProbe}
	start := time.Now()
	left, err := runPreStop(c.spec.Lifecycle.PreStop, grace, f, exited)
	pod := c.r.pod
	if err != nil {
		c.r.pr.cfg.Logf("pod %s/%s: container %s: preStop hook failed after %s: %v", pod.Namespace, pod.Name,
			c.spec.Name, time.Since(start).Round(time.Millisecond), err)
	} else {
		c.r.pr.cfg.Logf("pod %s/%s: container %s: preStop hook done in %s", pod.Namespace, pod.Name, c.spec.Name,
			time.Since(start).Round(time.Millisecond))
	}
	return left
}
