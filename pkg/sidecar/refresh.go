package sidecar

import (
	"net/http"
	"time"
)

// A refresh request (POST /peer/refresh) asks the sidecar to run a tick now
// rather than at the end of its period. It carries nothing: the tick fetches
// the views as always, so a request can make the sidecar look sooner but can
// never tell it what to see. The operator sends one to every site after it
// publishes a new generation, so that the target of a failover holds the new
// view in well under a peerCheckInterval.
//
// Requests are coalesced and rate-limited by schedule: any number of them
// between two ticks make one extra tick, and that tick starts no sooner than
// RefreshGap after the previous tick began. Ticks never overlap: the Run
// loop is the only caller.

// wakeKind says why the Run loop wakes.
type wakeKind uint8

const (
	// wakePeriodic: the tick of the period is due.
	wakePeriodic wakeKind = iota
	// wakeRefresh: a tick a refresh request asked for.
	wakeRefresh
	// wakeLease: the lease runs out before the next tick; check without gathering.
	wakeLease
)

var wakeKindNames = [...]string{wakePeriodic: "periodic", wakeRefresh: "refresh", wakeLease: "lease"}

func (k wakeKind) String() string { return wakeKindNames[k] }

// schedule plans the Run loop's wake-ups. It reads no clock: every method
// takes the time. It is not safe for concurrent use; the Run loop owns it.
type schedule struct {
	interval, gap time.Duration
	// next is when the next periodic tick is due.
	next time.Time
	// lastTick is when the last tick (of either kind) began; zero before any.
	lastTick time.Time
	// pending is true when a refresh was asked for since the last tick began.
	pending bool
}

// newSchedule plans a loop whose first periodic tick is due at start.
func newSchedule(interval, gap time.Duration, start time.Time) *schedule {
	return &schedule{interval: interval, gap: gap, next: start}
}

// request notes a refresh request. It reports false when one was already
// pending, so this one adds nothing.
func (s *schedule) request() bool {
	if s.pending {
		return false
	}
	s.pending = true
	return true
}

// wake is when the loop must wake next, and why, at now with the lease
// running out at lease. A pending refresh is due gap after the last tick
// began (at once when that is past); the periodic tick wins when it is due
// no later; the lease check wins when the lease runs out before either.
func (s *schedule) wake(now, lease time.Time) (time.Time, wakeKind) {
	at, kind := s.next, wakePeriodic
	if s.pending {
		if due := later(now, s.lastTick.Add(s.gap)); due.Before(at) {
			at, kind = due, wakeRefresh
		}
	}
	if lease.After(now) && lease.Before(at) {
		at, kind = lease, wakeLease
	}
	return at, kind
}

// ticked records that a tick of kind began at now. Every request pending
// then is answered by it, since the tick gathers after they arrived. A
// periodic tick moves the period on; a late one does not make up for
// missed periods.
func (s *schedule) ticked(now time.Time, kind wakeKind) {
	s.lastTick, s.pending = now, false
	if kind == wakePeriodic {
		s.next = s.next.Add(s.interval)
		if s.next.Before(now) {
			s.next = now
		}
	}
}

// defaultRefreshGap is a tenth of the period, within 50 ms and 250 ms: a
// flood of requests costs at most one extra tick per gap.
func defaultRefreshGap(interval time.Duration) time.Duration {
	return min(max(interval/10, 50*time.Millisecond), 250*time.Millisecond)
}

// Refresh asks the Run loop for a tick now. It never blocks: a request made
// while one is already waiting to be seen by the loop is folded into it.
func (r *Runner) Refresh() {
	r.log.Debug("refresh asked")
	r.metrics.refreshRequests.Inc()
	r.requestTick()
}

// requestTick asks for a tick without counting a refresh request.
func (r *Runner) requestTick() {
	select {
	case r.refresh <- struct{}{}:
	default:
	}
}

// serveRefresh answers POST /peer/refresh with 202: the tick will run, but
// has not run yet. The body, if any, is not read.
func (r *Runner) serveRefresh(w http.ResponseWriter, _ *http.Request) {
	r.Refresh()
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted"})
}
