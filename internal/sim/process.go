package sim

import (
	"net/url"
	"time"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// operatorProcess is the operator as the world sees it: a process that is
// up or down, makes its passes, answers sidecars, and keeps its persisted
// state in what stands for the API server: the real per-group loop
// (realop.go) is the only one.
type operatorProcess interface {
	// running reports whether the process is up.
	running() bool
	// stop kills the process: its memory is lost, its persisted state kept.
	stop()
	// restart starts a new process at now.
	restart(now time.Time)
	// restartInPods starts a new process at now in each replica's Pod:
	// the Lease identity (the Pod's name) is kept.
	restartInPods(now time.Time)
	// crashAfterWrites kills the leader's container right after its n-th
	// status write from now lands, down for dur steps, then restarted in
	// its Pod (restart-operator by=N).
	crashAfterWrites(n, dur int)
	// step runs the passes due at now.
	step(now time.Time)
	// answer serves site s's sidecar its view; q is the query of its
	// report. nil: no answer.
	answer(s *site, q url.Values) *sidecar.Reply
	// persisted is the operator's persisted state as the sim reads it.
	persisted() *Status
	// requestPlanned sets the planned-failover annotation to site.
	requestPlanned(site string)
	// adminFence sets or lifts the administrator's fence on site.
	adminFence(site string, on bool)
	// clearDivergence is the administrator's edit after a reclone.
	clearDivergence(site string)
}
