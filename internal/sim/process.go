package sim

import (
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// operatorProcess is the operator as the world sees it: a process that is
// up or down, makes its passes, answers sidecars, and keeps its persisted
// state in what stands for the API server. The model operator (operator.go)
// and the real pkg/controller loop (realop.go) both are one.
type operatorProcess interface {
	// running reports whether the process is up.
	running() bool
	// stop kills the process: its memory is lost, its persisted state kept.
	stop()
	// restart starts a new process at now.
	restart(now time.Time)
	// step runs the passes due at now.
	step(now time.Time)
	// answer serves site s's sidecar its view; rep is the sidecar's report.
	answer(s *site, now time.Time) *View
	// persisted is the operator's persisted state as the sim reads it.
	persisted() *Status
	// requestPlanned sets the planned-failover annotation to site.
	requestPlanned(site string)
	// adminFence sets or lifts the administrator's fence on site.
	adminFence(site string, on bool)
	// clearDivergence is the administrator's edit after a reclone.
	clearDivergence(site string)
}

// The model operator as an operatorProcess.

func (o *operator) running() bool      { return o.up }
func (o *operator) stop()              { o.up = false }
func (o *operator) persisted() *Status { return o.st }

func (o *operator) step(now time.Time) {
	if o.w.step%steps(o.w.cfg.PollInterval) == 0 {
		o.cycle(now)
	}
}

func (o *operator) answer(s *site, now time.Time) *View {
	v := o.serve(s.idx, now)
	return &v
}

func (o *operator) requestPlanned(site string)      { o.st.PlannedRequest = site }
func (o *operator) adminFence(site string, on bool) { o.st.Site(site).AdminFenced = on }
func (o *operator) clearDivergence(site string)     { o.st.Site(site).Divergent = gtid.Set{} }
