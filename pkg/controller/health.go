package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Readiness and liveness of the operator process (cmd/operator serves them
// on /readyz and /healthz; the chart probes both).
//
// Ready: this replica leads, and every group it watches has been read by
// its poll loop once (the Registry knows it, so /active-site serves it).
// Once that held, a group created later does not take readiness away: a
// not-Ready leader drops out of the Service every sidecar reaches the
// operator through, and one new group must not cut off the others.
//
// Live: no running poll loop has gone without completing a pass for longer
// than StallLimit. A loop stuck in a call that ignores its deadline stops
// failure detection for its group; the kubelet restarts the container,
// and the new process resumes whatever the status holds.

// passed records a completed pass of the group's loop (grouploop.Env.Passed).
func (o *Operator) passed(key types.NamespacedName, interval time.Duration) {
	now := o.env.Clock.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if h, ok := o.loops[key]; ok {
		h.lastPass, h.interval = now, interval
	}
}

// budgeted records the budget of the pass the group's loop is about to
// act in (grouploop.Env.Budget), so that the pass is judged by its own.
func (o *Operator) budgeted(key types.NamespacedName, budget time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h, ok := o.loops[key]; ok {
		h.budget = budget
	}
}

// Ready is nil when this replica leads and has loaded every group it
// watches; else it wraps ErrNotLeading or ErrGroupsNotLoaded.
func (o *Operator) Ready(ctx context.Context) error {
	select {
	case <-o.started:
	default:
		return ErrNotLeading
	}
	if o.loaded.Load() {
		return nil
	}
	list := &v1alpha1.MysqlFailoverGroupList{}
	if err := o.client.List(ctx, list); err != nil {
		return fmt.Errorf("readiness: list groups: %w", err)
	}
	var waiting []string
	for _, g := range list.Items {
		key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
		if g.DeletionTimestamp.IsZero() && !o.env.Registry.Knows(key) {
			waiting = append(waiting, key.String())
		}
	}
	if len(waiting) > 0 {
		slices.Sort(waiting)
		return fmt.Errorf("%w: %s", ErrGroupsNotLoaded, strings.Join(waiting, ", "))
	}
	o.loaded.Store(true)
	return nil
}

// Healthy is nil unless a running poll loop has not completed a pass
// within StallLimit of its last one (or of its start); then it wraps
// ErrLoopStalled and names the loops.
func (o *Operator) Healthy() error {
	now := o.env.Clock.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	var stalled []string
	for key, h := range o.loops {
		select {
		case <-h.done:
			continue // ended: the next reconcile starts it again
		default:
		}
		limit := StallLimit(o.opts, h.interval, h.budget)
		if since := now.Sub(h.lastPass); since > limit {
			stalled = append(stalled, fmt.Sprintf("%s (no pass for %s, limit %s)", key, since.Round(time.Second), limit))
		}
	}
	if len(stalled) > 0 {
		slices.Sort(stalled)
		return fmt.Errorf("%w: %s", ErrLoopStalled, strings.Join(stalled, "; "))
	}
	return nil
}

// StallLimit is how long a group's loop may go without completing a pass
// before the process counts as hung: Options.StallTimeout when set, else
// three poll intervals plus the longest a pass of that group can
// legitimately take (budget, failover.Settings.PassBudget from the
// group's own spec: its salvage and drain timeouts included, so a long
// salvageTimeout is not cut short by a restart). Before the loop's first
// pass, interval counts as the default poll interval, 2 s, and budget as
// a pass with the operator's own settings and no salvage.
func StallLimit(opts Options, interval, budget time.Duration) time.Duration {
	opts = opts.withDefaults()
	if opts.StallTimeout > 0 {
		return opts.StallTimeout
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	if budget <= 0 {
		budget = opts.loop().Failover.PassBudget()
	}
	return 3*interval + budget
}
