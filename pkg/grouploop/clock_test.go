package grouploop

import (
	"time"

	"k8s.io/utils/clock"
)

// fnClock is a clock whose time is what its function says; its timers are
// the wall clock's. Tests move the time by changing what the function reads.
type fnClock struct {
	clock.RealClock
	now func() time.Time
}

func (c fnClock) Now() time.Time                  { return c.now() }
func (c fnClock) Since(t time.Time) time.Duration { return c.now().Sub(t) }

// clockAt is the clock that reads now.
func clockAt(now func() time.Time) clock.Clock { return fnClock{now: now} }
