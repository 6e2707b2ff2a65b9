package sim

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/controller"
)

// leaseDuration is the leader-election lock's lease (controller-runtime's
// default): a standby takes the lock once the holder has not renewed it
// for this long.
const leaseDuration = 15 * time.Second

// simLease is the leader-election lock as the API server holds it.
type simLease struct {
	holder    string
	renewedAt time.Time
	// renewTime is the lock's renewTime as the API server holds it: the
	// holder's wall clock when it last renewed (realop_clock.go).
	renewTime time.Time
}

// opProc is one operator process: its Registry, API and poll loop, and
// what it believes about leadership.
type opProc struct {
	r           *realOperator
	id          string
	up          bool
	pausedUntil int
	leads       bool // this process believes it leads (its manager was elected)
	elected     chan struct{}
	reg         *authority.Registry
	op          *controller.Operator
	loop        *controller.GroupStepper
	http        http.Handler
	nextAt      time.Time
}

// start starts the process afresh, standing by.
func (p *opProc) start(now time.Time) {
	p.r.started++
	p.startAs(now, fmt.Sprintf("operator-%d", p.r.started))
}

// startAs starts the process afresh under identity id, standing by.
func (p *opProc) startAs(now time.Time, id string) {
	r := p.r
	p.id, p.up, p.pausedUntil, p.leads = id, true, 0, false
	p.elected = make(chan struct{})
	p.reg = authority.NewRegistry(r.clk.Now)
	p.reg.SetSigner(simSigner)
	rec := simRecorder{w: r.w}
	auth := authority.NewReportAuth(simTrust, r.api, rec, nil, logr.Discard())
	op, err := controller.New(controller.Deps{Client: r.api, Reader: r.api, Resolver: simResolver{},
		Router: &simRouter{w: r.w}, Recorder: rec, Registry: p.reg, Open: r.open, Clock: r.clk, Auth: auth,
		Leadership: simLeadership{p}, Log: logr.Discard()},
		controller.Options{NudgeTimeout: -1, DrainTimeout: r.w.cfg.DrainTimeout})
	if err != nil {
		panic(fmt.Sprintf("sim operator: %v", err))
	}
	p.op = op
	p.http = (&authority.API{Registry: p.reg, Elected: p.elected, Auth: auth}).Handler()
	p.nextAt = now
}

// exit ends the process.
func (p *opProc) exit() {
	if p.loop != nil {
		p.loop.Close()
		p.loop = nil
	}
	p.up, p.leads = false, false
}

// awake reports whether the process runs and is not paused.
func (p *opProc) awake() bool { return p.up && p.r.w.step >= p.pausedUntil }

// passes runs the loop's passes due at now, at most maxPassesPerStep.
func (p *opProc) passes(now time.Time) {
	for range maxPassesPerStep {
		if now.Before(p.nextAt) {
			return
		}
		wait, gone := p.loop.Pass(context.Background())
		if gone {
			p.r.w.check.violate("group-gone", "the operator's loop found the group gone")
			p.exit()
			return
		}
		p.nextAt = now.Add(wait)
	}
}

// elect runs every awake replica's elector: the holder renews; a holder
// that finds the lock taken exits, as the manager does when it loses the
// election (and starts again, standing by); a standby takes a lock whose
// lease ran out.
func (r *realOperator) elect(now time.Time) {
	for _, p := range r.procs {
		if !p.awake() {
			continue
		}
		switch {
		case r.lease.holder == p.id && !p.leads:
			r.retake(p, now)
		case r.lease.holder == p.id:
			r.lease.renewedAt, r.lease.renewTime = now, r.clk.Now().Round(0)
		case p.leads:
			r.w.logf("operator %s lost the leader lock to %s: it exits and starts again", p.id, r.lease.holder)
			p.exit()
			p.start(now)
		case r.lease.holder == "" || !now.Before(r.lease.renewedAt.Add(leaseDuration)):
			r.lease = simLease{holder: p.id, renewedAt: now, renewTime: r.clk.Now().Round(0)}
			p.lead(now)
			r.w.logf("operator %s leads", p.id)
		}
	}
}

// lead makes the process the leader: its poll loop starts at now.
func (p *opProc) lead(now time.Time) {
	p.leads = true
	close(p.elected)
	p.loop = p.op.Stepper(p.r.key)
	p.nextAt = now
}

// pauseLeader freezes the replica that believes it leads until step until.
func (r *realOperator) pauseLeader(until int) {
	for _, p := range r.procs {
		if p.leads && p.up {
			p.pausedUntil = max(p.pausedUntil, until)
		}
	}
}

// pick is the replica a request lands on: the operator's Service spreads
// requests over every replica that runs (readiness is the cache, not the
// lock: a standby answers 503); nil when none answers.
func (r *realOperator) pick(*site) *opProc {
	var awake []*opProc
	for _, p := range r.procs {
		if p.awake() {
			awake = append(awake, p)
		}
	}
	if len(awake) == 0 {
		return nil
	}
	return awake[r.spread.IntN(len(awake))]
}

// simLeadership is authority.LockLeadership over the sim's lock: held
// while the lock names the process and its last renewal plus the lease is
// ahead of now, both on the process's wall clock (renewTime was written
// by it, and read back from the API server without a monotonic reading).
type simLeadership struct{ p *opProc }

// Held implements authority.Leadership.
func (l simLeadership) Held(context.Context) error {
	r := l.p.r
	if r.lease.holder != l.p.id {
		return fmt.Errorf("%w: the lock is held by %q", authority.ErrNotLeader, r.lease.holder)
	}
	if !r.clk.Now().Before(r.lease.renewTime.Add(leaseDuration)) {
		return fmt.Errorf("%w: the lock expired", authority.ErrNotLeader)
	}
	return nil
}
