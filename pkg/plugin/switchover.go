package plugin

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// PlannedValue is the planned-failover annotation's value for site, with a
// maxLagWait override when it is positive.
func PlannedValue(site string, maxLagWait time.Duration) string {
	if maxLagWait <= 0 {
		return site
	}
	return site + ":maxLagWait=" + maxLagWait.String()
}

// Request is an asked-for planned failover: the annotation's value and the
// status block that was there before, to tell the answer from an older one.
type Request struct {
	Namespace, Name, Value string
	before                 *v1alpha1.PlannedFailoverStatus
}

// Switchover sets the planned-failover annotation of a group to move the
// primary role to site. It refuses an unknown site and a group that already
// carries a request.
func Switchover(ctx context.Context, c client.Client, ns, name, site string, maxLagWait time.Duration) (Request, error) {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return Request{}, err
	}
	if err := checkSite(g, site); err != nil {
		return Request{}, err
	}
	if v, ok := g.Annotations[v1alpha1.PlannedFailoverAnnotation]; ok {
		return Request{}, fmt.Errorf("%s/%s carries %q: %w", ns, name, v, ErrRequestPending)
	}
	r := Request{Namespace: ns, Name: name, Value: PlannedValue(site, maxLagWait)}
	if b := g.Status.PlannedFailover; b != nil {
		r.before = b.DeepCopy()
	}
	base := g.DeepCopy()
	setAnnotation(g, v1alpha1.PlannedFailoverAnnotation, r.Value)
	if err := c.Patch(ctx, g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return Request{}, fmt.Errorf("annotate %s/%s with %s=%s: %w", ns, name, v1alpha1.PlannedFailoverAnnotation, r.Value, err)
	}
	return r, nil
}

// WaitPlanned follows status.plannedFailover, printing each new phase, until
// the request ends. It returns the final block, and an error wrapping
// ErrPlannedFailed, with the reason and message, when it ended in Failed.
func WaitPlanned(ctx context.Context, c client.Client, r Request, every time.Duration, w io.Writer) (*v1alpha1.PlannedFailoverStatus, error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var started bool
	var last string
	for {
		g, err := getGroup(ctx, c, r.Namespace, r.Name)
		if err != nil {
			return nil, err
		}
		b := g.Status.PlannedFailover
		if b != nil && b.Request == r.Value && (!b.Phase.Terminal() || r.isNew(b)) {
			started = true
		}
		if started && b != nil && b.Request == r.Value {
			if line := phaseLine(b); line != last {
				last = line
				if _, err := fmt.Fprintln(w, line); err != nil {
					return nil, wrapWrite(err)
				}
			}
			if b.Phase.Terminal() && g.Annotations[v1alpha1.PlannedFailoverAnnotation] != r.Value {
				return b, plannedResult(r, b)
			}
		}
		select {
		case <-ctx.Done():
			return b, fmt.Errorf("wait for the planned failover of %s/%s: %w", r.Namespace, r.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// isNew reports whether b answers this request rather than an earlier one
// with the same value.
func (r Request) isNew(b *v1alpha1.PlannedFailoverStatus) bool {
	old := r.before
	if old == nil || old.Request != b.Request {
		return true
	}
	if old.StartTime == nil || b.StartTime == nil {
		return old.StartTime != b.StartTime
	}
	return !old.StartTime.Equal(b.StartTime)
}

func phaseLine(b *v1alpha1.PlannedFailoverStatus) string {
	line := string(b.Phase)
	if b.Reason != "" {
		line += " (" + b.Reason + ")"
	}
	if b.Message != "" {
		line += ": " + b.Message
	}
	return line
}

func plannedResult(r Request, b *v1alpha1.PlannedFailoverStatus) error {
	if b.Phase != v1alpha1.PhaseFailed {
		return nil
	}
	return fmt.Errorf("%s/%s to %s: %s: %s: %w", r.Namespace, r.Name, r.Value, b.Reason, b.Message, ErrPlannedFailed)
}
