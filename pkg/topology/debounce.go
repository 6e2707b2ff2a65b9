package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Probe is the raw outcome of one probe of a site's mysqld.
type Probe uint8

// The probe outcomes.
const (
	// ProbeFailed: the probe got no answer (connection refused, timeout, query error).
	ProbeFailed Probe = iota + 1
	// ProbeWritable: mysqld answered and accepts writes.
	ProbeWritable
	// ProbeReadOnly: mysqld answered and is fenced (read_only / super_read_only).
	ProbeReadOnly
)

func (p Probe) String() string {
	switch p {
	case ProbeFailed:
		return "failed"
	case ProbeWritable:
		return "writable"
	case ProbeReadOnly:
		return "read-only"
	}
	return fmt.Sprintf("Probe(%d)", uint8(p))
}

// state is the SiteState a successful probe shows directly.
func (p Probe) state() v1alpha1.SiteState {
	if p == ProbeWritable {
		return v1alpha1.StateWritable
	}
	return v1alpha1.StateReadOnly
}

// Debouncer turns one site's raw probes into its debounced SiteState.
//
// A new Debouncer is unknown. A successful probe shows writable or read-only
// at once, except after the site was declared unreachable: it comes back only
// after RecoveryThreshold successes in a row. The site is declared unreachable
// after FailureThreshold failures in a row; until then it keeps its last state.
//
// A Debouncer holds no clock and starts no goroutine: the caller passes the
// probe time to Observe. It is not safe for concurrent use.
type Debouncer struct {
	failureThreshold  int
	recoveryThreshold int

	state       v1alpha1.SiteState
	since       time.Time // when state last changed; zero while unknown from the start
	failures    int       // consecutive failed probes
	successes   int       // consecutive successful probes
	lastSuccess time.Time
	failingFrom time.Time // first failure of the current run of failures
}

// NewDebouncer returns an unknown Debouncer. Both thresholds must be at least 1.
func NewDebouncer(failureThreshold, recoveryThreshold int) (*Debouncer, error) {
	if failureThreshold < 1 {
		return nil, fmt.Errorf("failureThreshold %d: %w", failureThreshold, ErrThreshold)
	}
	if recoveryThreshold < 1 {
		return nil, fmt.Errorf("recoveryThreshold %d: %w", recoveryThreshold, ErrThreshold)
	}
	return &Debouncer{
		failureThreshold:  failureThreshold,
		recoveryThreshold: recoveryThreshold,
		state:             v1alpha1.StateUnknown,
	}, nil
}

// Observe feeds one probe taken at now and returns the debounced state and
// whether this probe changed it.
func (d *Debouncer) Observe(now time.Time, p Probe) (v1alpha1.SiteState, bool, error) {
	switch p {
	case ProbeFailed:
		return d.fail(now)
	case ProbeWritable, ProbeReadOnly:
		return d.succeed(now, p)
	}
	return d.state, false, fmt.Errorf("observe %v: %w", p, ErrProbe)
}

func (d *Debouncer) fail(now time.Time) (v1alpha1.SiteState, bool, error) {
	if d.failures == 0 {
		d.failingFrom = now
	}
	d.failures++
	d.successes = 0
	if d.state != v1alpha1.StateUnreachable && d.failures >= d.failureThreshold {
		return d.moveTo(now, v1alpha1.StateUnreachable)
	}
	return d.state, false, nil
}

func (d *Debouncer) succeed(now time.Time, p Probe) (v1alpha1.SiteState, bool, error) {
	d.failures = 0
	d.successes++
	d.lastSuccess = now
	if d.state == v1alpha1.StateUnreachable && d.successes < d.recoveryThreshold {
		return d.state, false, nil
	}
	if d.state == p.state() {
		return d.state, false, nil
	}
	return d.moveTo(now, p.state())
}

func (d *Debouncer) moveTo(now time.Time, s v1alpha1.SiteState) (v1alpha1.SiteState, bool, error) {
	d.state = s
	d.since = now
	return s, true, nil
}

// State is the debounced state.
func (d *Debouncer) State() v1alpha1.SiteState { return d.state }

// Since is when State last changed (zero if it never did).
func (d *Debouncer) Since() time.Time { return d.since }

// LastSuccess is the time of the last successful probe (zero if none).
func (d *Debouncer) LastSuccess() time.Time { return d.lastSuccess }

// FailingSince is the time of the first failure of the current run of failed
// probes, and false when the last probe succeeded (or there was none).
func (d *Debouncer) FailingSince() (time.Time, bool) {
	return d.failingFrom, d.failures > 0
}

// WithFreshProbe is the state Decide sees for a site: the debounced state,
// except that a site this pass's probe saw writable is writable now. The
// debouncer holds a recovering site unreachable for recoveryThreshold
// answers, which is right for letting it back in, but a site seen writing
// may write: it must count as a writer to fence, never as an unreachable
// site whose fence a lease deadline has confirmed.
func WithFreshProbe(debounced v1alpha1.SiteState, fresh Probe) v1alpha1.SiteState {
	if fresh == ProbeWritable {
		return v1alpha1.StateWritable
	}
	return debounced
}
