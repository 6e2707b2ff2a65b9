package sim

import (
	"slices"
	"time"

	"k8s.io/utils/clock"
)

// sideClock is one sidecar process's clock (sidecar.Config.Clock). Its
// readings carry a wall clock and a monotonic one, as time.Now's do
// (monoTime): the monotonic reading is the process's own time since the
// world's epoch; the wall clock is that off by the site's skew, so a skew
// fault moves only what the Runner would read on the wall.
//
// The world moves it forward between calls: to each wake-up's time, then
// to the step's time. Within a call the world stands still, and a wait
// (a timer, a sleep: the fence's retries and the escalation's polls) moves
// the process's clock on by its length at once, so the process can run
// ahead of the world; it then runs nothing until the world catches up. A
// callback timer (AfterFunc: the tick's lease watch) fires when the clock
// passes its time; its callback runs after the call, as its goroutine
// would once the Runner's locks let it (settle), and a timer fired in a
// call is not undone by a Stop in it.
type sideClock struct {
	s    *site
	mono time.Duration // since the world's epoch
	// funcs are the armed AfterFunc timers; fired, the callbacks due.
	funcs []*sideTimer
	fired []func()
}

var _ clock.WithDelayedExecution = (*sideClock)(nil)

func newSideClock(s *site, now time.Time) *sideClock {
	return &sideClock{s: s, mono: now.Sub(Epoch)}
}

// Now implements clock.PassiveClock.
func (c *sideClock) Now() time.Time {
	return monoTime(Epoch.Add(c.mono+time.Duration(c.s.skew)*StepDuration), c.mono+monoBase)
}

// Since implements clock.PassiveClock.
func (c *sideClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// monoOf is t's place on the process's monotonic clock.
func (c *sideClock) monoOf(t time.Time) time.Duration { return c.mono + t.Sub(c.Now()) }

// to moves the clock on to t; never back.
func (c *sideClock) to(t time.Time) { c.toMono(c.monoOf(t)) }

// toMono moves the clock on to mono; never back.
func (c *sideClock) toMono(mono time.Duration) { c.advance(mono - c.mono) }

// advance moves the clock on by d, firing the callback timers it passes.
func (c *sideClock) advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mono += d
	c.funcs = slices.DeleteFunc(c.funcs, func(t *sideTimer) bool {
		if t.at > c.mono {
			return false
		}
		t.fired = true
		c.fired = append(c.fired, t.f)
		return true
	})
}

// runFired runs the callbacks of the timers that fired, in order.
func (c *sideClock) runFired() {
	for len(c.fired) > 0 {
		f := c.fired[0]
		c.fired = c.fired[1:]
		f()
	}
}

// After implements clock.Clock: the wait is over at once, the clock d on.
func (c *sideClock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer implements clock.Clock: a wait, over at once with the clock d on.
func (c *sideClock) NewTimer(d time.Duration) clock.Timer {
	t := &waitTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Sleep implements clock.Clock.
func (c *sideClock) Sleep(d time.Duration) { c.advance(d) }

// Tick implements clock.Clock; the Runner ticks through its Stepper, so
// this is a single wait.
func (c *sideClock) Tick(d time.Duration) <-chan time.Time { return c.After(d) }

// AfterFunc implements clock.WithDelayedExecution.
func (c *sideClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &sideTimer{c: c, f: f}
	t.Reset(d)
	return t
}

// waitTimer is a wait that is over as soon as it starts.
type waitTimer struct {
	c  *sideClock
	ch chan time.Time
}

func (t *waitTimer) C() <-chan time.Time { return t.ch }
func (t *waitTimer) Stop() bool          { return false }

func (t *waitTimer) Reset(d time.Duration) bool {
	t.c.advance(d)
	select {
	case t.ch <- t.c.Now():
	default:
	}
	return false
}

// sideTimer is a callback timer.
type sideTimer struct {
	c     *sideClock
	f     func()
	at    time.Duration
	fired bool
}

func (t *sideTimer) C() <-chan time.Time { return nil }

// Stop disarms the timer; a fired one's callback runs anyway.
func (t *sideTimer) Stop() bool {
	if t.fired {
		return false
	}
	n := len(t.c.funcs)
	t.c.funcs = slices.DeleteFunc(t.c.funcs, func(o *sideTimer) bool { return o == t })
	return len(t.c.funcs) < n
}

func (t *sideTimer) Reset(d time.Duration) bool {
	armed := t.Stop()
	t.fired, t.at = false, t.c.mono+d
	if d <= 0 {
		t.fired = true
		t.c.fired = append(t.c.fired, t.f)
		return armed
	}
	t.c.funcs = append(t.c.funcs, t)
	return armed
}
