package sidecar

import (
	"context"
	"github.com/shipstream/bloodraven/pkg/reclone"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// The kubelet's probes of a site's Pod ask the sidecar (docs/sidecar.md,
// "Probes"):
//   - the mysqld container's startup and liveness probes GET
//     /healthz/live, which reads mysqld by SQL within LiveTimeout. A mysqld
//     that accepts connections but does not answer (frozen, deadlocked)
//     fails, so the kubelet restarts it; one whose process runs but which
//     does not accept connections yet (crash recovery) passes for
//     StartDelay from the first unanswered read (or the start of a new
//     process, when the pid file tells);
//   - readiness (GET /readyz) needs the last read to have reached mysqld,
//     the application account to log in (when Config.AppLogin is set), and
//     no termination under way;
//   - the mysqld container's preStop hook GETs /lifecycle/stop, which runs
//     (or joins) the termination and answers when it is over, so that the
//     kubelet's SIGTERM reaches mysqld only after the sidecar fenced,
//     drained and shut it down (terminate.go).

// Paths of the lifecycle endpoints.
const (
	PathLive = "/healthz/live"
	PathStop = "/lifecycle/stop"
)

// liveState remembers the mysqld process the liveness check last saw, and
// since when it has not answered: the start of the current run of failed
// reads, restarted when another process runs (a restart: its own recovery
// gets a whole StartDelay); guarded by Runner.mu.
type liveState struct {
	pid   int
	since time.Time
}

// LiveInput is what one liveness check found.
type LiveInput struct {
	Now time.Time
	// Answered: the SQL read succeeded within its timeout.
	Answered bool
	// HasPID: pid evidence is configured; PID is the running mysqld's, 0
	// when none runs.
	HasPID bool
	PID    int
	// Since is when the current run of unanswered reads began, or when
	// this process (PID) was first seen since, whichever is later.
	Since time.Time
	// TCP is what a dial of mysqld's port found (TCPNone: not configured).
	TCP        TCPState
	StartDelay time.Duration
	// Terminating: the sidecar is stopping mysqld itself.
	Terminating bool
	// Held: mysqld's hold file exists, a reclone stopped mysqld on
	// purpose and its entrypoint waits (pkg/reclone, HoldFile).
	Held bool
}

// Liveness outcomes, the reason in /healthz/live's body.
const (
	LiveAnswered     = "answered"
	LiveStarting     = "starting"
	LiveTerminating  = "terminating"
	LiveNoAnswer     = "not answering"
	LiveGone         = "not running"
	LiveStartTooLong = "not accepting connections after startDelay"
	LiveHeld         = "held for a reclone"
)

// Liveness decides a liveness check: whether mysqld counts as alive, and why.
func Liveness(in LiveInput) (bool, string) {
	switch {
	case in.Terminating:
		return true, LiveTerminating
	case in.Answered:
		return true, LiveAnswered
	case in.TCP == TCPOpen:
		// The port accepts, the server does not answer: frozen.
		return false, LiveNoAnswer
	case in.Held:
		// Stopped on purpose: a restart of its container would only wait again.
		return true, LiveHeld
	case in.Now.Sub(in.Since) < in.StartDelay:
		// A process, not accepting yet: starting, crash recovery.
		return true, LiveStarting
	}
	return false, LiveStartTooLong
}

// mountLifecycle adds the lifecycle endpoints to a health mux.
func (r *Runner) mountLifecycle(mux chi.Router) {
	mux.Get(PathLive, r.serveLive)
	mux.Get(PathStop, r.serveStop)
}

func (r *Runner) serveLive(w http.ResponseWriter, req *http.Request) {
	in := r.liveInput(req.Context())
	ok, why := Liveness(in)
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
		r.log.Warn("liveness check failed", "reason", why)
	}
	writeJSON(w, code, map[string]string{"mysqld": why})
}

// liveInput reads mysqld by SQL within LiveTimeout and gathers the process
// evidence when the read failed.
func (r *Runner) liveInput(ctx context.Context) LiveInput {
	in := LiveInput{Now: r.cfg.Clock.Now(), StartDelay: r.cfg.StartDelay, Terminating: r.Terminating(),
		Held: r.cfg.MysqldHoldFile != "" && reclone.Held(r.cfg.MysqldHoldFile)}
	if in.Terminating {
		return in
	}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.LiveTimeout)
	defer cancel()
	_, err := r.db.Status(sctx)
	in.Answered = err == nil
	p := r.process()
	in.HasPID = p.HasPID()
	if in.HasPID {
		in.PID = p.LivePID()
	}
	if !in.Answered && p.HasTCP() {
		in.TCP = p.DialTCP(ctx)
	}
	r.mu.Lock()
	switch {
	case in.Answered:
		r.live.since = time.Time{}
	case r.live.since.IsZero() || in.PID != r.live.pid:
		r.live.since = in.Now
	}
	r.live.pid, in.Since = in.PID, r.live.since
	r.mu.Unlock()
	return in
}

// serveStop is the preStop hook: it answers once the termination is over.
// The kubelet holds the hook within the grace period, longer than the
// server's write timeout, which is lifted for this answer.
func (r *Runner) serveStop(w http.ResponseWriter, req *http.Request) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	writeJSON(w, http.StatusOK, r.Terminate(req.Context()))
}

// ready tells whether the Pod takes traffic, and why not.
func (r *Runner) ready(ctx context.Context) (bool, string) {
	if r.Terminating() {
		return false, "terminating"
	}
	r.mu.Lock()
	db := r.st.db
	r.mu.Unlock()
	if db != DBReadOnly && db != DBWritable {
		return false, "mysqld " + db.String()
	}
	if r.cfg.AppLogin == nil {
		return true, ""
	}
	lctx, cancel := context.WithTimeout(ctx, r.cfg.LiveTimeout)
	defer cancel()
	if err := r.cfg.AppLogin(lctx); err != nil {
		return false, "application login: " + err.Error()
	}
	return true, ""
}
