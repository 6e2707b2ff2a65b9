package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/pkg/grouploop"
)

// GroupStepper runs one group's poll loop a pass at a time, when its
// caller says, on the Operator's clock. It is the same loop EnsureLoop
// runs in a goroutine: the simulation steps it in logical time. Never step
// a group whose loop also runs; a GroupStepper is not safe for concurrent use.
type GroupStepper struct{ l *grouploop.Loop }

// Stepper returns a stepper for the group, with a fresh loop memory (a new
// operator process's).
func (o *Operator) Stepper(key types.NamespacedName) *GroupStepper {
	return &GroupStepper{l: grouploop.New(o.env, key, nil)}
}

// Pass makes one observe-decide-act-record pass. It returns the wait until
// the next pass, and stop when the group is gone.
func (s *GroupStepper) Pass(ctx context.Context) (next time.Duration, stop bool) {
	return s.l.Step(ctx)
}

// Close closes the loop's database connections.
func (s *GroupStepper) Close() { s.l.Close() }
