package sim

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
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

// sidecarFence is a sidecar fencing its mysqld for why. A fence that cannot
// complete (it fails, it is slow, or mysqld is frozen) escalates within
// the sidecar's budget, well inside one peerCheckInterval (pkg/sidecar's
// Escalation): mysqld is stopped, and it boots fenced.
func (w *World) sidecarFence(s *site, why string) {
	if !s.writable() {
		return
	}
	if s.fenceFails(w.step) || s.fenceSlow(w.step) || s.mysqldPaused(w.step) {
		w.stopMySQL(s)
		w.stats.SidecarFences[why+"-stop"]++
		w.logf("sidecar %s: its fence (%s) could not complete; it stopped mysqld", s.name, why)
		return
	}
	s.db.readOnly = true
	w.stats.SidecarFences[why]++
	w.logf("sidecar %s fenced its mysqld (%s), view %s gen %d", s.name, why, s.sidecar.View().Active, s.sidecar.View().Generation)
}

// stopMySQL stops the site's mysqld; the kubelet starts it again, fenced.
func (w *World) stopMySQL(s *site) {
	s.db.up, s.dbFrozenUntil = false, 0
	s.dbBackAt = w.step + mysqldRestartSteps
}

// operatorFence is the operator's SQL fence of s under the fence faults:
// it errs and changes nothing, or times out and lands later.
func (w *World) operatorFence(s *site) (handled bool, err error) {
	switch {
	case s.fenceFails(w.step):
		w.logf("operator's fence of %s failed", s.name)
		return true, fmt.Errorf("fence %s: lock wait timeout: %w", s.name, mysql.ErrTimeout)
	case s.fenceSlow(w.step) && !s.db.readOnly:
		w.lateFences = append(w.lateFences, lateFence{site: s.idx, at: w.step + s.fenceSlowBy, boot: s.dbBoots})
		w.logf("operator's fence of %s timed out; it lands in %d steps", s.name, s.fenceSlowBy)
		return true, fmt.Errorf("fence %s: %w", s.name, mysql.ErrTimeout)
	}
	return false, nil
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

// leaseFenceMargin is the time the sim's sidecar allows its arming
// statement (the runner's least margin, a second).
const leaseFenceMargin = time.Second

// armLeaseFence is the sidecar's arm of mysqld's lease fence after its
// tick, as the runner decides it (sidecar.Loop.LeaseFence). The event
// fires at the latest: a second after its whole seconds are up, counted
// on the site's own wall clock (a skew fault moves it).
func (w *World) armLeaseFence(s *site) {
	rs, ok := s.sidecar.(*realSidecar)
	if !ok {
		return
	}
	if s.mysqldPaused(w.step) {
		return // the statement hangs in a frozen mysqld, and times out
	}
	db := sidecar.DBDown
	switch {
	case s.writable():
		db = sidecar.DBWritable
	case s.db.up:
		db = sidecar.DBReadOnly
	}
	if after, arm := rs.l.LeaseFence(w.now(), db, leaseFenceMargin); arm {
		s.leaseFenceAt = w.clockOf(s).Add(after.Truncate(time.Second) + time.Second)
	}
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
