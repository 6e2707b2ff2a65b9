package sidecar

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// HTTP paths the sidecar serves besides v1alpha1.PathPeerActiveSite.
const (
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
	PathStatus  = "/status"
	PathMetrics = "/metrics"
)

// Handler serves the sidecar's endpoints:
//   - GET /healthz: 200 while the process runs.
//   - GET /readyz: 200 when the last read reached mysqld, else 503.
//   - GET /peer/active-site: the cached view, exactly as the operator signed
//     it; 503 before the sidecar holds one or before the operator has
//     answered this process (not 404, which peers take for a sidecar too
//     old to have the path).
//   - POST /peer/refresh: 202; the Run loop ticks soon (Refresh).
//   - GET /status: a StatusReport.
//   - GET /metrics: the sidecar's own registry.
//   - GET /peer/clone with Config.Clone: refused (403) without TLS, since
//     no caller can prove who it is (tls.go).
func (r *Runner) Handler() http.Handler {
	mux := chi.NewRouter()
	mux.Get(PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Get(PathReadyz, r.serveReadyz)
	r.mountLifecycle(mux)
	mux.Get(v1alpha1.PathPeerActiveSite, r.servePeerView)
	mux.Post(v1alpha1.PathPeerRefresh, r.serveRefresh)
	mux.Get(PathStatus, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Status())
	})
	mux.Handle(PathMetrics, promhttp.HandlerFor(r.metrics.reg, promhttp.HandlerOpts{}))
	r.mountClone(mux)
	return mux
}

func (r *Runner) serveReadyz(w http.ResponseWriter, req *http.Request) {
	ok, why := r.ready(req.Context())
	r.mu.Lock()
	db, err := r.st.db, r.st.dbErr
	r.mu.Unlock()
	if ok {
		writeJSON(w, http.StatusOK, map[string]string{"mysqld": db.String()})
		return
	}
	body := map[string]string{"mysqld": db.String(), "reason": why}
	if err != nil {
		body["error"] = err.Error()
	}
	writeJSON(w, http.StatusServiceUnavailable, body)
}

func (r *Runner) servePeerView(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	v, ok := r.loop.Relay()
	r.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": ErrNoView.Error()})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
