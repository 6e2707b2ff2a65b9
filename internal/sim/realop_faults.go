package sim

import (
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// The faults only runs of the real operator draw (schedule.go's
// realOperatorKinds). Each acts on the world, or on the real operator's
// surroundings: its process, its API's requests, the API server's Pods.

// lateKept is how many past reports and answers per site a late-report or
// late-view fault may pick from.
const lateKept = 8

// frozen reports whether the site's processes are paused at step.
func (s *site) frozen(step int) bool { return step < s.frozenUntil }

// lossy reports whether the operator's calls to the site lose their answers at step.
func (s *site) lossy(step int) bool { return step < s.lossyUntil }

// fireReal applies a fault of the kinds that came with the real operator.
func (w *World) fireReal(f Fault, s *site, until int) {
	r, ok := w.op.(*realOperator)
	if !ok {
		w.logf("fault %s needs the real operator: ignored", f.Kind)
		return
	}
	switch f.Kind {
	case FaultPauseSite:
		s.frozenUntil = max(s.frozenUntil, until)
	case FaultLossyReplies:
		s.lossyUntil = max(s.lossyUntil, until)
	case FaultSkew:
		s.skew = f.By
	case FaultLateReport:
		r.lateReport(s)
	case FaultLateView:
		r.lateView(s)
	case FaultOrphanPod:
		if s.pod {
			s.orphanUntil = max(s.orphanUntil, until)
		}
	case FaultForgeReport:
		r.forgeReports(s)
	case FaultPauseMySQL:
		if s.pod && s.db.up {
			s.dbFrozenUntil = max(s.dbFrozenUntil, until)
		}
	case FaultPauseSidecar:
		if s.pod {
			s.sidecarFrozenUntil = max(s.sidecarFrozenUntil, until)
		}
	case FaultFailFence:
		s.fenceFailUntil = max(s.fenceFailUntil, until)
	case FaultSlowFence:
		s.fenceSlowUntil, s.fenceSlowBy = max(s.fenceSlowUntil, until), max(f.Delay, 1)
	}
}

// thaw is a frozen sidecar's wake-up: its process runs again at once, its
// overdue wake-up first, before the site's clients write in this step.
// A read of mysqld takes time (up to StatusTimeout), and the clients of a
// mysqld that thawed with it, or ran on, write meanwhile: the sim lets them
// write once during the process's first read (readWindow). So a sidecar
// that read mysqld before applying its rule would let a write through on a
// site whose lease ran out while it was frozen; the Runner's wake-up rule
// (enforceWake) fences on what it last saw before it reads anything.
func (w *World) thaw(s *site) {
	if s.sidecar == nil || !s.pod {
		return
	}
	s.sidecar.clk.toMono(w.now().Sub(Epoch))
	s.readWindow = true
	w.stepSidecar(s)
	s.readWindow = false
}

// remember keeps the site's last lateKept queries and answers.
func (r *realOperator) remember(s *site, q url.Values, v *sidecar.Reply) {
	k := r.sent[s.idx]
	k.queries = append(k.queries, q)
	k.answers = append(k.answers, v)
	if len(k.queries) > lateKept {
		k.queries, k.answers = k.queries[1:], k.answers[1:]
	}
	r.sent[s.idx] = k
}

// lateReport sends the oldest kept report of s again: a request the
// network held back, or duplicated. The handler's answer goes nowhere.
func (r *realOperator) lateReport(s *site) {
	k := r.sent[s.idx]
	p := r.pick(s)
	if len(k.queries) == 0 || p == nil {
		return
	}
	p.serveQuery(k.queries[0], s)
	r.w.logf("operator got a late copy of %s's report", s.name)
}

// lateView makes the next answer s's sidecar gets from the operator the
// oldest kept one: an answer overtaken by later ones.
func (r *realOperator) lateView(s *site) {
	k := r.sent[s.idx]
	if len(k.answers) == 0 {
		return
	}
	k.late = k.answers[0]
	r.sent[s.idx] = k
}

// forgeReports sends, for s, the report a fenced sidecar at the current
// generation would send: once with no certificate and once with another
// site's. Both must be refused (and counted): believed, they would
// confirm a fence that did not happen.
func (r *realOperator) forgeReports(s *site) {
	p := r.pick(s)
	if p == nil {
		return
	}
	q := realReport(s.name, r.persisted().Generation).Query(r.key.Namespace, r.key.Name)
	var other *site
	for _, o := range r.w.sites {
		if o != s {
			other = o
			break
		}
	}
	// Plain reports are accepted (never as evidence) in the upgrade window,
	// until the group is authenticated; another site's certificate never is.
	authenticated := r.stored().Status.ReportsAuthenticatedAt != nil
	for _, tlsFrom := range []*site{nil, other} {
		rec := p.serveQuery(q, tlsFrom)
		if rec.Code == http.StatusOK && (tlsFrom != nil || authenticated) {
			r.w.check.violate(InvariantForgedAccepted, "a forged report for "+s.name+" was answered 200")
		}
	}
	r.w.logf("forged reports for %s sent to the operator", s.name)
}

// serveQuery sends GET /active-site?q, over TLS with from's certificate
// (nil: plain HTTP), to the replica's handler.
func (p *opProc) serveQuery(q url.Values, from *site) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/active-site?"+q.Encode(), nil)
	if from != nil {
		req.TLS = simTLS(from.name)
	}
	rec := httptest.NewRecorder()
	p.http.ServeHTTP(rec, req)
	return rec
}
