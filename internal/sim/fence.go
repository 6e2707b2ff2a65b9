package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// Faults of fencing and of single processes (realop_faults.go draws them):
// a mysqld frozen while its sidecar runs, fences that fail or land late,
// and links that lose one direction only.

// mysqldRestartSteps is how long the kubelet takes to start a mysqld that
// a sidecar's escalation stopped.
const mysqldRestartSteps = 3

// lateFence is an operator's fence whose call timed out, still queued in
// mysqld: it lands at step at, unless that mysqld process is gone by then.
type lateFence struct {
	site, at, boot int
}

// mysqldPaused reports whether the site's mysqld runs no code at step:
// the whole site, or mysqld alone, is frozen.
func (s *site) mysqldPaused(step int) bool { return s.frozen(step) || step < s.dbFrozenUntil }

// sidecarPaused reports whether the site's sidecar runs no code at step:
// the whole site, or the sidecar alone, is frozen.
func (s *site) sidecarPaused(step int) bool { return s.frozen(step) || step < s.sidecarFrozenUntil }

// fenceFails and fenceSlow report the site's fence faults at step.
func (s *site) fenceFails(step int) bool { return step < s.fenceFailUntil }
func (s *site) fenceSlow(step int) bool  { return step < s.fenceSlowUntil }

// stopMySQL stops the site's mysqld; the kubelet starts it again, fenced.
func (w *World) stopMySQL(s *site) {
	s.db.up, s.dbFrozenUntil = false, 0
	s.dbBackAt = w.step + mysqldRestartSteps
}

// faultyFence is a fence of s under the fence faults: it errs and changes
// nothing, or times out and lands later; nil when no fault acts (the fence
// can go ahead). who is "operator" for its SQL fence, which the trace
// shows; "" for the sidecar's, whose retries it leaves out (its stop of
// mysqld, if it comes to that, is shown), and of whose retries one late
// fence per mysqld process is enough.
func (w *World) faultyFence(s *site, who string) error {
	switch {
	case s.fenceFails(w.step):
		if who != "" {
			w.logf("%s's fence of %s failed", who, s.name)
		}
		return fmt.Errorf("fence %s: lock wait timeout: %w", s.name, mysql.ErrTimeout)
	case s.fenceSlow(w.step) && !s.db.readOnly:
		late := lateFence{site: s.idx, at: w.step + s.fenceSlowBy, boot: s.dbBoots}
		if who == "" && slices.Contains(w.lateFences, late) {
			return fmt.Errorf("fence %s: %w", s.name, mysql.ErrTimeout)
		}
		w.lateFences = append(w.lateFences, late)
		if who != "" {
			w.logf("%s's fence of %s timed out; it lands in %d steps", who, s.name, s.fenceSlowBy)
		}
		return fmt.Errorf("fence %s: %w", s.name, mysql.ErrTimeout)
	}
	return nil
}

// landFences applies the late fences due at this step.
func (w *World) landFences() {
	kept := w.lateFences[:0]
	for _, f := range w.lateFences {
		if f.at > w.step {
			kept = append(kept, f)
			continue
		}
		s := w.sites[f.site]
		if s.pod && s.db.up && s.dbBoots == f.boot && !s.db.readOnly {
			s.db.readOnly = true
			w.logf("operator's late fence of %s landed", s.name)
		}
	}
	w.lateFences = kept
}

// fireLeaseFences runs, in every running mysqld whose lease fence is due,
// the event that fences it. It stays due across restarts (it is in
// mysqld's data dictionary), firing once.
func (w *World) fireLeaseFences() {
	for _, s := range w.sites {
		if s.leaseFenceAt.IsZero() || !s.pod || !s.db.up || s.mysqldPaused(w.step) || w.clockOf(s).Before(s.leaseFenceAt) {
			continue
		}
		s.leaseFenceAt = time.Time{}
		if !s.db.readOnly {
			s.db.readOnly = true
			w.stats.SidecarFences["lease-event"]++
			w.logf("mysqld %s fenced itself: its lease fence event fired", s.name)
		}
	}
}

// fireOneWay cuts one direction of a link: what f's Site sends to its Peer.
func (w *World) fireOneWay(f Fault, until int) {
	a, b := w.node(f.Site), w.node(f.Peer)
	if a < 0 || b < 0 || a == b {
		return
	}
	w.net.cutOneWay(a, b, until)
}
