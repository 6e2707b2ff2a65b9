package sidecar

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The handover (docs/upgrades.md): a sidecar that re-executes itself (an
// in-place upgrade, or kubectl bloodraven restart-inplace) hands the new
// process its fencing state, so that the swap neither fences the primary
// (a fresh boot fences a writable mysqld until the operator answers) nor
// forgets anything:
//   - the view it holds, exactly as signed: the new process verifies it
//     again and adopts it only if it passes, so the generation floor can
//     only stay or rise (the floor file is written as before);
//   - the lease as ages, not times: how long ago the process booted and
//     last heard a valid view, measured on the monotonic clock, plus the
//     system's boot-time clock when it saved them. The new process adds
//     the time the exec took on that clock, so neither a wall-clock step
//     nor the exec itself renews the lease;
//   - whether the operator had answered since boot.
//
// It travels in the environment (HandoverEnv), which execve hands to the
// new image directly: no file that another container of the Pod could
// write, and a container restarted by the kubelet never has it. It is
// honoured only in the same process (exec keeps the pid), within
// maxHandoverAge, for the same group and site. Anything else starts the
// process as a fresh boot, which is the safe side.

// HandoverEnv is the environment variable that carries the handover.
const HandoverEnv = "BLOODRAVEN_SIDECAR_HANDOVER"

// maxHandoverAge bounds how long an exec may take for its handover to count.
const maxHandoverAge = 30 * time.Second

// Handover is the fencing state a re-executing sidecar hands the new process.
type Handover struct {
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Site      string `json:"site"`
	// PID is the process's pid: exec keeps it, a restart does not.
	PID int `json:"pid"`
	// SavedAt is CLOCK_BOOTTIME (ns) when the state was saved.
	SavedAt int64 `json:"savedAt"`
	// View and OpView are the cached view and the last view heard from the
	// operator itself, exactly as signed; nil when none.
	View   *v1alpha1.ActiveSiteView `json:"view,omitempty"`
	Source string                   `json:"source,omitempty"`
	OpView *v1alpha1.ActiveSiteView `json:"opView,omitempty"`
	// BootAge, ContactAge and OperatorAge are how long before SavedAt the
	// process booted, last heard a valid view, and last heard the
	// operator; ContactAge and OperatorAge are negative when never.
	BootAge     time.Duration `json:"bootAge"`
	ContactAge  time.Duration `json:"contactAge"`
	OperatorAge time.Duration `json:"operatorAge"`
	// AwaitingOperator is true when the operator had not answered since boot.
	AwaitingOperator bool `json:"awaitingOperator"`
	// LastSeen is mysqld's state as the process last read it: the new
	// process's first check fences on it before it reads mysqld again
	// (enforceWake), exactly as the old process would have. Without it, a
	// replica's sidecar, whose view names another site, would take the
	// unknown state for a writable one and fence its replica blindly.
	LastSeen DBState `json:"lastSeen"`
}

// bootClock is CLOCK_BOOTTIME: monotonic, system-wide (it survives exec),
// and counting suspend.
func bootClock() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// age is how long before now t was; negative when t is zero.
func age(now, t time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return max(now.Sub(t), 0)
}

// handover is the loop's state to hand over at now.
func (l *Loop) handover(now time.Time) Handover {
	h := Handover{Namespace: l.s.Namespace, Group: l.s.Group, Site: l.s.Site, PID: os.Getpid(), SavedAt: bootClock(),
		Source: l.source, BootAge: age(now, l.bootAt), ContactAge: age(now, l.lastContact),
		OperatorAge: age(now, l.lastOperator), AwaitingOperator: l.awaitingOperator}
	if l.hasView {
		v := l.view
		h.View = &v
	}
	if l.opView.Operator != "" {
		v := l.opView
		h.OpView = &v
	}
	return h
}

// restore takes over h at now, elapsed after it was saved. It changes
// nothing unless h is for this sidecar, recent, and its view verifies.
func (l *Loop) restore(h Handover, now time.Time, elapsed time.Duration) error {
	switch {
	case h.Namespace != l.s.Namespace || h.Group != l.s.Group || h.Site != l.s.Site:
		return fmt.Errorf("%w: for %s/%s site %s", ErrBadHandover, h.Namespace, h.Group, h.Site)
	case elapsed < 0 || elapsed > maxHandoverAge:
		return fmt.Errorf("%w: saved %s ago", ErrBadHandover, elapsed)
	case h.BootAge < 0:
		return fmt.Errorf("%w: negative boot age", ErrBadHandover)
	}
	if h.View != nil {
		if err := l.check(*h.View); err != nil {
			return fmt.Errorf("%w: %w", ErrBadHandover, err)
		}
	}
	if h.OpView != nil {
		if err := l.check(*h.OpView); err != nil {
			return fmt.Errorf("%w: operator's view: %w", ErrBadHandover, err)
		}
	}
	at := func(a time.Duration) time.Time {
		if a < 0 {
			return time.Time{}
		}
		return now.Add(-elapsed - a)
	}
	l.bootAt = at(h.BootAge)
	l.lastContact, l.lastOperator = at(h.ContactAge), at(h.OperatorAge)
	l.awaitingOperator = h.AwaitingOperator || h.OpView == nil
	if h.View != nil {
		l.view, l.source, l.hasView = *h.View, h.Source, true
	}
	if h.OpView != nil {
		l.opView = *h.OpView
	}
	return nil
}

// EncodeHandover renders h for HandoverEnv.
func EncodeHandover(h Handover) string {
	b, _ := json.Marshal(h) // plain types: never fails
	return string(b)
}

// DecodeHandover reads HandoverEnv's value; nil for "".
func DecodeHandover(s string) (*Handover, error) {
	if s == "" {
		return nil, nil
	}
	var h Handover
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHandover, err)
	}
	return &h, nil
}

// restoreHandover applies cfg.Handover to the new Runner's loop when it
// was saved by this very process (the same pid) shortly before; otherwise
// the process starts as a fresh boot. It logs either way.
func (r *Runner) restoreHandover(now time.Time) {
	h := r.cfg.Handover
	if h == nil {
		return
	}
	elapsed := time.Duration(bootClock() - h.SavedAt)
	err := error(nil)
	if h.PID != os.Getpid() {
		err = fmt.Errorf("%w: saved by pid %d, this is %d", ErrBadHandover, h.PID, os.Getpid())
	} else {
		err = r.loop.restore(*h, now, elapsed)
	}
	if err != nil {
		r.log.Warn("handover refused; starting as a fresh boot", "error", err)
		return
	}
	r.handedOver = true
	if h.LastSeen <= DBWritable {
		r.st.db = h.LastSeen
	}
	r.log.Info("took over the fencing state of the process before the re-exec", "generation", r.loop.Floor(),
		"awaitingOperator", r.loop.awaitingOperator, "leaseRemaining", r.loop.LeaseRemaining(now).String())
}
