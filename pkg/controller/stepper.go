package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// GroupStepper runs one group's poll loop a pass at a time, when its
// caller says, on the Operator's clock. It is the same loop EnsureLoop
// runs in a goroutine: the simulation steps it in logical time. Never step
// a group whose loop also runs; a GroupStepper is not safe for concurrent use.
type GroupStepper struct{ l *groupLoop }

// Stepper returns a stepper for the group, with a fresh loop memory (a new
// operator process's).
func (o *Operator) Stepper(key types.NamespacedName) *GroupStepper {
	return &GroupStepper{l: newGroupLoop(o, key)}
}

// Pass makes one observe-decide-act-record pass. It returns the wait until
// the next pass, and stop when the group is gone.
func (s *GroupStepper) Pass(ctx context.Context) (next time.Duration, stop bool) {
	return s.l.step(ctx)
}

// Close closes the loop's database connections.
func (s *GroupStepper) Close() { s.l.conns.close() }
