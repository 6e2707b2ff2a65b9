package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// API serves the topology protocol's GET /active-site, plus /healthz and /readyz.
type API struct {
	Registry *Registry
	// Reader answers for groups whose poll loop has not published yet: their
	// persisted status is then the view.
	Reader client.Reader
	// Ready reports readiness; nil means always ready.
	Ready func() error
	// Auth checks that a report comes from the site it names (auth.go);
	// nil accepts every report.
	Auth *ReportAuth
}

// Handler routes the API.
func (a *API) Handler() http.Handler {
	r := chi.NewRouter()
	r.Get(v1alpha1.PathActiveSite, a.activeSite)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	r.Get("/readyz", a.readyz)
	return r
}

func (a *API) readyz(w http.ResponseWriter, _ *http.Request) {
	if a.Ready != nil {
		if err := a.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ok"))
}

// activeRequest is a parsed GET /active-site.
type activeRequest struct {
	group  types.NamespacedName
	site   string
	report *failover.Report
}

func (a *API) activeSite(w http.ResponseWriter, req *http.Request) {
	ar, err := parseActiveRequest(req)
	if err != nil {
		writeError(w, err)
		return
	}
	view, sites, err := a.lookup(req.Context(), ar.group)
	if errors.Is(err, ErrNoActiveSite) && ar.report != nil && hasSite(sites, ar.site) {
		a.Registry.noteReport(ar.group, ar.site, *ar.report) // the generation it holds guards the bootstrap
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if ar.site != "" && !hasSite(sites, ar.site) {
		writeError(w, fmt.Errorf("%w %q: group %s has sites %v", ErrUnknownSite, ar.site, ar.group, sites))
		return
	}
	if ar.site != "" && a.Auth != nil {
		if err := a.Auth.Check(req, ar.group, ar.site, sites); err != nil {
			writeError(w, err)
			return
		}
	}
	view = a.Registry.Serve(view, ar.site, ar.report)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(view)
}

// parseActiveRequest reads namespace and group (required), and the
// sidecar's optional report: site, generation, fenced=true|false, mysqld=up|down.
func parseActiveRequest(req *http.Request) (activeRequest, error) {
	q := req.URL.Query()
	ar := activeRequest{group: types.NamespacedName{Namespace: q.Get(v1alpha1.QueryNamespace), Name: q.Get(v1alpha1.QueryGroup)}}
	if ar.group.Namespace == "" || ar.group.Name == "" {
		return ar, fmt.Errorf("%w: %s and %s are required", ErrBadRequest, v1alpha1.QueryNamespace, v1alpha1.QueryGroup)
	}
	ar.site = q.Get(v1alpha1.QuerySite)
	rep := &failover.Report{}
	if s := q.Get(v1alpha1.QueryGeneration); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return ar, fmt.Errorf("%w: %s=%q is not a generation", ErrBadRequest, v1alpha1.QueryGeneration, s)
		}
		rep.Generation = n
	}
	if s := q.Get(v1alpha1.QueryFenced); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return ar, fmt.Errorf("%w: %s=%q is not true or false", ErrBadRequest, v1alpha1.QueryFenced, s)
		}
		rep.Fenced = b
	}
	switch s := q.Get(v1alpha1.QueryMysqld); s {
	case "", "up":
	case "down":
		rep.MysqldDown = true
	default:
		return ar, fmt.Errorf("%w: %s=%q is not up or down", ErrBadRequest, v1alpha1.QueryMysqld, s)
	}
	if ar.site != "" {
		ar.report = rep
	} else if q.Has(v1alpha1.QueryGeneration) || q.Has(v1alpha1.QueryFenced) || q.Has(v1alpha1.QueryMysqld) {
		return ar, fmt.Errorf("%w: a report needs %s", ErrBadRequest, v1alpha1.QuerySite)
	}
	return ar, nil
}

// lookup returns the group's published view, or its persisted status when
// its loop has not published yet.
func (a *API) lookup(ctx context.Context, key types.NamespacedName) (v1alpha1.ActiveSiteView, []string, error) {
	if v, sites, ok := a.Registry.View(key); ok {
		return v, sites, nil
	}
	var g v1alpha1.MysqlFailoverGroup
	if a.Reader == nil {
		return v1alpha1.ActiveSiteView{}, nil, fmt.Errorf("%w %s", ErrUnknownGroup, key)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := a.Reader.Get(ctx, key, &g); err != nil {
		if apierrors.IsNotFound(err) {
			return v1alpha1.ActiveSiteView{}, nil, fmt.Errorf("%w %s", ErrUnknownGroup, key)
		}
		return v1alpha1.ActiveSiteView{}, nil, fmt.Errorf("read group %s: %w", key, err)
	}
	if g.Status.ActiveSite == "" {
		return v1alpha1.ActiveSiteView{}, siteNames(&g), fmt.Errorf("%s: %w", key, ErrNoActiveSite)
	}
	return v1alpha1.ActiveSiteView{Namespace: g.Namespace, Group: g.Name, ActiveSite: g.Status.ActiveSite,
		Generation: g.Status.TopologyGeneration, Source: v1alpha1.SourceOperator}, siteNames(&g), nil
}

// writeError answers with the status the error's sentinel calls for and a JSON body.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrUnknownSite):
		code = http.StatusBadRequest
	case errors.Is(err, ErrUnknownGroup):
		code = http.StatusNotFound
	case errors.Is(err, ErrNoActiveSite):
		code = http.StatusServiceUnavailable
	case errors.Is(err, ErrUnauthenticated):
		code = http.StatusUnauthorized
	case errors.Is(err, ErrForbidden):
		code = http.StatusForbidden
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// APIServer runs the API as a manager Runnable on every replica, leader or
// not: a standby answers from the persisted status.
type APIServer struct {
	Addr    string
	Handler http.Handler
	// Listening, when set, is called with the bound address (tests bind ":0").
	Listening func(addr string)
	// TLS, when set, makes the server speak HTTPS only (auth.go).
	TLS *tls.Config
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (s *APIServer) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (s *APIServer) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("api listen %s: %w", s.Addr, err)
	}
	if s.Listening != nil {
		s.Listening(ln.Addr().String())
	}
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 5 * time.Second, TLSConfig: s.TLS}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	serve := srv.Serve
	if s.TLS != nil {
		serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
	}
	if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api serve: %w", err)
	}
	return nil
}
