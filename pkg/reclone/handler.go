package reclone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// MetricRefusals counts reclone requests refused, by reason.
const MetricRefusals = "bloodraven_sidecar_reclone_refusals_total"

// Handler returns the HTTP handler of PathReclone; the refusal counter is
// registered on reg unless it is nil. It fails when the Executor lacks
// what it needs.
func (e *Executor) Handler(reg prometheus.Registerer) (http.Handler, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRefusals,
		Help: "POST /sidecar/reclone refused: not the operator, malformed, stale, the active or a writable site, busy."},
		[]string{"reason"})
	for _, r := range refusalReasons {
		refused.WithLabelValues(r)
	}
	if reg != nil {
		if err := reg.Register(refused); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("reclone: register %s: %w", MetricRefusals, err)
			}
			if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				refused = c
			}
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a, r := e.serve(req)
		if r != nil {
			refused.WithLabelValues(r.reason).Inc()
			e.log().Warn("reclone request refused", "reason", r.reason, "remote", req.RemoteAddr, "error", r.err)
			writeJSON(w, r.code, Answer{Reason: r.reason, Error: r.err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, a)
	}), nil
}

// serve checks the caller, the request and the view, then handles it.
func (e *Executor) serve(req *http.Request) (Answer, *refusal) {
	if req.Method != http.MethodPost {
		return Answer{}, refuse(http.StatusMethodNotAllowed, RefuseMethod, "method %s", req.Method)
	}
	if r := e.operatorOnly(req); r != nil {
		return Answer{}, r
	}
	var q Request
	dec := json.NewDecoder(io.LimitReader(req.Body, maxBody))
	if err := dec.Decode(&q); err != nil {
		return Answer{}, refuse(http.StatusBadRequest, RefuseMalformed, "body: %v", err)
	}
	if err := q.Validate(e.Site); err != nil {
		return Answer{}, refuse(http.StatusBadRequest, RefuseMalformed, "%v", err)
	}
	active, gen, ok := e.View()
	switch {
	case !ok:
		return Answer{}, refuse(http.StatusServiceUnavailable, RefuseNoView, "the sidecar holds no view yet")
	case q.Generation < gen:
		return Answer{}, refuse(http.StatusConflict, RefuseStale,
			"generation %d is older than the view's %d: the caller's picture is out of date", q.Generation, gen)
	case q.Generation > gen:
		return Answer{}, refuse(http.StatusServiceUnavailable, RefuseAhead,
			"the sidecar's view (generation %d) is behind the caller's %d; ask again", gen, q.Generation)
	case active == e.Site:
		return Answer{}, refuse(http.StatusConflict, RefuseActive, "%s is the active site: its data is never cloned over", e.Site)
	}
	return e.handle(req.Context(), q)
}

// operatorOnly lets only the operator's certificate through.
func (e *Executor) operatorOnly(req *http.Request) *refusal {
	if e.TLS == nil {
		return refuse(http.StatusForbidden, RefuseNoTLS, "%v: reclones need mutual TLS", pki.ErrWrongIdentity)
	}
	pool, err := e.TLS.Pool()
	if err != nil {
		return refuse(http.StatusUnauthorized, RefuseUntrusted, "%v", err)
	}
	id, err := pki.PeerIdentity(req.TLS, pool, time.Now())
	switch {
	case errors.Is(err, pki.ErrNoCertificate):
		return refuse(http.StatusUnauthorized, RefuseNoCertificate, "%v", err)
	case err != nil:
		return refuse(http.StatusUnauthorized, RefuseUntrusted, "%v", err)
	case id.Kind != pki.KindOperator:
		return refuse(http.StatusForbidden, RefuseWrongIdentity, "%v: %s may not run a reclone", pki.ErrWrongIdentity, id)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
