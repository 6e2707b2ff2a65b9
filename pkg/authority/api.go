package authority

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// API serves the topology protocol's GET /active-site, plus /healthz and /readyz.
//
// Only the elected leader serves views, and only views its own poll loops
// published, each signed: a standby, or a leader before its first pass or
// before its signing key is loaded, answers 503, which renews no sidecar's
// lease. A standby never answers from the persisted status: its copy may be
// stale, and a fresh observedAt on it would renew an old primary's lease
// behind the leader's back.
type API struct {
	Registry *Registry
	// Elected is closed once this replica is the leader (the manager's
	// Elected()); nil means never.
	Elected <-chan struct{}
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

// leader reports whether this replica has been elected.
func (a *API) leader() bool {
	if a.Elected == nil {
		return false
	}
	select {
	case <-a.Elected:
		return true
	default:
		return false
	}
}

// activeRequest is a parsed GET /active-site.
type activeRequest struct {
	group  types.NamespacedName
	site   string
	report *topology.Report
}

func (a *API) activeSite(w http.ResponseWriter, req *http.Request) {
	ar, err := parseActiveRequest(req)
	if err != nil {
		a.refuse(w, req, ar, RejectMalformed, err)
		return
	}
	view, sites, err := a.lookup(ar.group)
	if err != nil {
		// A leader that has not published the group yet (no active site)
		// still records an authenticated report: the generation it holds
		// guards the bootstrap (grouploop's authority_hold.go). It serves nothing.
		if errors.Is(err, ErrNotPublished) && ar.report != nil && hasSite(sites, ar.site) &&
			a.evidence(req) && a.checkReport(w, req, ar, sites) {
			a.Registry.noteReport(ar.group, ar.site, *ar.report)
		}
		writeError(w, err)
		return
	}
	if ar.site != "" && !hasSite(sites, ar.site) {
		writeError(w, fmt.Errorf("%w %q: group %s has sites %v", ErrUnknownSite, ar.site, ar.group, sites))
		return
	}
	if ar.site != "" && !a.checkReport(w, req, ar, sites) {
		return
	}
	if err := a.checkEcho(ar.report); err != nil {
		a.refuse(w, req, ar, RejectForgedEcho, err)
		return
	}
	if !a.evidence(req) {
		// A report over plain HTTP, accepted in the upgrade window, renews
		// the old sidecar but is never fence evidence: nothing proves it
		// came from the site it names.
		ar.report = nil
	}
	signer := a.Registry.Signer()
	if signer == nil {
		writeError(w, ErrNoSigningKey)
		return
	}
	view = signer.Sign(a.Registry.Serve(view, ar.site, ar.report))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(view)
}

// evidence reports whether a report on req may count as fence evidence:
// only one that proved its site with a client certificate, or any when
// this API checks no identities (tests without a CA).
func (a *API) evidence(req *http.Request) bool { return a.Auth == nil || req.TLS != nil }

// checkReport checks that a request naming a site comes from that site
// (auth.go); on refusal it answers and returns false.
func (a *API) checkReport(w http.ResponseWriter, req *http.Request, ar activeRequest, sites []string) bool {
	if a.Auth == nil {
		return true
	}
	if err := a.Auth.Check(req, ar.group, ar.site, sites); err != nil {
		writeError(w, err)
		return false
	}
	return true
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
	rep := &topology.Report{}
	if s := q.Get(v1alpha1.QueryGeneration); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || !reportableGeneration(n) {
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
	if err := parseEcho(q, rep); err != nil {
		return ar, err
	}
	if ar.site != "" {
		ar.report = rep
	} else if q.Has(v1alpha1.QueryGeneration) || q.Has(v1alpha1.QueryFenced) || q.Has(v1alpha1.QueryMysqld) ||
		q.Has(v1alpha1.QueryBoot) || q.Has(v1alpha1.QueryExecutableHash) || q.Has(v1alpha1.QueryViewOperator) || q.Has(v1alpha1.QueryViewSeq) ||
		q.Has(v1alpha1.QueryViewObservedAt) {
		return ar, fmt.Errorf("%w: a report needs %s", ErrBadRequest, v1alpha1.QuerySite)
	}
	return ar, nil
}

// maxIDLen bounds the boot and operator ids a report may carry, and
// maxSeqLen the digits of an echoed Seq (an int64 has at most 19).
const (
	maxIDLen  = 64
	maxSeqLen = 19
)

// parseEcho reads the report's boot id and its echo of the operator's last
// view: viewOperator with viewSeq (a positive decimal int64), or, from a
// sidecar older than viewSeq, viewOperator with viewObservedAt (RFC 3339);
// a sidecar sends all three to stay readable by an operator older than
// viewSeq. viewObservedAt is checked but kept nowhere: a wall clock can
// step, so it is never evidence (registry_seq.go).
func parseEcho(q url.Values, rep *topology.Report) error {
	rep.Boot, rep.ViewOperator = q.Get(v1alpha1.QueryBoot), q.Get(v1alpha1.QueryViewOperator)
	if len(rep.Boot) > maxIDLen || len(rep.ViewOperator) > maxIDLen {
		return fmt.Errorf("%w: %s or %s longer than %d", ErrBadRequest, v1alpha1.QueryBoot, v1alpha1.QueryViewOperator, maxIDLen)
	}
	if h := q.Get(v1alpha1.QueryExecutableHash); h != "" {
		if !exehash.Valid(h) {
			return fmt.Errorf("%w: %s is not %d lowercase hex digits", ErrBadRequest, v1alpha1.QueryExecutableHash, exehash.Len)
		}
		rep.ExecutableHash = h
	}
	seq, at := q.Get(v1alpha1.QueryViewSeq), q.Get(v1alpha1.QueryViewObservedAt)
	if (seq == "" && at == "") != (rep.ViewOperator == "") {
		return fmt.Errorf("%w: %s goes with %s or %s", ErrBadRequest, v1alpha1.QueryViewOperator,
			v1alpha1.QueryViewSeq, v1alpha1.QueryViewObservedAt)
	}
	if seq != "" {
		n, err := parseSeq(seq)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadRequest, v1alpha1.QueryViewSeq, err)
		}
		rep.ViewSeq = n
	}
	if at != "" {
		if len(at) > maxIDLen {
			return fmt.Errorf("%w: %s longer than %d", ErrBadRequest, v1alpha1.QueryViewObservedAt, maxIDLen)
		}
		if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
			return fmt.Errorf("%w: %s=%q: %w", ErrBadRequest, v1alpha1.QueryViewObservedAt, at, err)
		}
	}
	return nil
}

// parseSeq reads an echoed Seq: 1 to 19 decimal digits (no sign, no
// spaces) that make a positive int64.
func parseSeq(s string) (int64, error) {
	if len(s) > maxSeqLen {
		return 0, fmt.Errorf("%d characters, at most %d", len(s), maxSeqLen)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a decimal number", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a sequence number (1 to %d)", s, int64(math.MaxInt64))
	}
	return n, nil
}

// lookup returns the group's published view and its sites: only on the
// leader, and only once its poll loop published.
func (a *API) lookup(key types.NamespacedName) (v1alpha1.ActiveSiteView, []string, error) {
	if !a.leader() {
		return v1alpha1.ActiveSiteView{}, nil, ErrNotLeader
	}
	v, sites, ok := a.Registry.View(key)
	if !ok {
		return v1alpha1.ActiveSiteView{}, a.Registry.knownSites(key), fmt.Errorf("%w %s", ErrNotPublished, key)
	}
	return v, sites, nil
}

// writeError answers with the status the error's sentinel calls for and a JSON body.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrUnknownSite):
		code = http.StatusBadRequest
	case errors.Is(err, ErrNotLeader), errors.Is(err, ErrNotPublished), errors.Is(err, ErrNoSigningKey):
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
// not: a standby answers /active-site with 503 (API.Elected).
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
