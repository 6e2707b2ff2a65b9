package sidecar

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// The authenticated transport (docs/security.md). With Config.TLS set:
//   - every request the sidecar makes goes over TLS 1.3, presents the
//     site's certificate, and accepts the server only when its certificate
//     chains to the CA bundle and names whom the sidecar meant to reach:
//     the operator for the operator's URL, peer site P of this group for
//     P's URL. Host names are not checked, identities are;
//   - the peer port (PeerHandler, over ServerTLS) serves GET
//     /peer/active-site to anyone who completes the handshake, and POST
//     /peer/refresh only to the operator or another site of this group:
//     401 without a valid certificate, 403 with someone else's;
//   - GET /peer/clone (Config.Clone) streams a physical backup to the
//     operator or another site of this group only (pkg/clone's Gate);
//   - health, readiness, status and metrics are served in plain HTTP on
//     their own port (HealthHandler), for probes and scrapers.

// MetricRejectedRefreshes counts refused POST /peer/refresh by reason.
const MetricRejectedRefreshes = "bloodraven_sidecar_rejected_refreshes_total"

// Reasons a refresh is refused.
const (
	RefreshNoCertificate = "no-certificate"
	RefreshUntrusted     = "untrusted"
	RefreshWrongIdentity = "wrong-identity"
)

// checkTLS refuses plain URLs and two targets behind one address: each
// address must stand for one identity.
func (c Config) checkTLS() error {
	if c.TLS == nil {
		return nil
	}
	_, err := c.expectations()
	return err
}

// expectations maps each target's address (host:port) to the identity it
// must prove.
func (c Config) expectations() (map[string]pki.Identity, error) {
	out := map[string]pki.Identity{}
	add := func(raw string, id pki.Identity) error {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" {
			return fmt.Errorf("%q: with TLS every URL must be https: %w", raw, ErrInvalidSettings)
		}
		port := u.Port()
		if port == "" {
			port = "443"
		}
		addr := net.JoinHostPort(u.Hostname(), port)
		if prev, dup := out[addr]; dup && prev != id {
			return fmt.Errorf("%s stands for both %s and %s: %w", addr, prev, id, ErrInvalidSettings)
		}
		out[addr] = id
		return nil
	}
	if err := add(c.OperatorURL, pki.OperatorIdentity()); err != nil {
		return nil, err
	}
	for _, p := range c.Peers {
		if err := add(p.URL, pki.SiteIdentity(c.Namespace, c.Group, p.Name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// useTLS makes client dial every target over TLS with the site's
// certificate, checking the identity each address stands for.
func (c Config) useTLS(client *http.Client) error {
	if c.TLS == nil {
		return nil
	}
	want, err := c.expectations()
	if err != nil {
		return err
	}
	tr, ok := client.Transport.(*http.Transport)
	if !ok {
		return errors.New("sidecar: the HTTP client has no *http.Transport")
	}
	tr.DialTLSContext = pki.DialTLS(c.TLS, func(_ context.Context, addr string) (pki.Identity, error) {
		id, ok := want[addr]
		if !ok {
			return pki.Identity{}, fmt.Errorf("%w: no identity known for %s", pki.ErrWrongIdentity, addr)
		}
		return id, nil
	}, time.Now)
	return nil
}

// ServerTLS is the peer port's TLS configuration; nil without Config.TLS.
func (r *Runner) ServerTLS() *tls.Config {
	if r.cfg.TLS == nil {
		return nil
	}
	return pki.ServerConfig(r.cfg.TLS)
}

// PeerHandler serves the peer port: GET /peer/active-site, and POST
// /peer/refresh for the operator and the group's other sites only (when
// Config.TLS is set; without it, for anyone, as before).
func (r *Runner) PeerHandler() http.Handler {
	mux := chi.NewRouter()
	mux.Get(v1alpha1.PathPeerActiveSite, r.servePeerView)
	mux.Post(v1alpha1.PathPeerRefresh, r.authorizeRefresh(r.serveRefresh))
	r.mountClone(mux)
	mux.Post(v1alpha1.PathSidecarUpgrade, r.upgradeHandler())
	r.mountReclone(mux)
	return mux
}

// mountReclone serves a reclone's phases on this site (Config.Reclone),
// to the operator only (pkg/reclone); the Executor reads the view this
// sidecar relays. Without it the path answers 404, which the operator
// takes for a sidecar that cannot reclone.
func (r *Runner) mountReclone(mux chi.Router) {
	e := r.cfg.Reclone
	if e == nil {
		return
	}
	if e.View == nil {
		e.View = r.recloneView
	}
	if e.TLS == nil {
		e.TLS = r.cfg.TLS
	}
	h, err := e.Handler(r.metrics.reg)
	if err != nil {
		r.log.Error("reclone endpoint not served", "error", err)
		return
	}
	mux.Handle(reclone.PathReclone, h)
}

// recloneView is the view a reclone is checked against: the one relayed
// to peers (held, and heard from the operator since this process began).
func (r *Runner) recloneView() (string, int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.loop.Relay()
	return v.ActiveSite, v.Generation, ok
}

// mountClone serves the clone donor's stream behind its gate, when this
// site donates (Config.Clone). Every method reaches the gate, so that each
// refusal is counted.
func (r *Runner) mountClone(mux chi.Router) {
	if r.cfg.Clone == nil {
		return
	}
	gate := clone.Gate{TLS: r.cfg.TLS, Namespace: r.cfg.Namespace, Group: r.cfg.Group, Site: r.cfg.Site,
		Registerer: r.metrics.reg, Logger: r.log}
	mux.Handle(clone.PathClone, gate.Wrap(r.cfg.Clone))
}

// HealthHandler serves the plain-HTTP port: /healthz, /readyz, /status and /metrics.
func (r *Runner) HealthHandler() http.Handler {
	mux := chi.NewRouter()
	mux.Get(PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Get(PathReadyz, r.serveReadyz)
	r.mountLifecycle(mux)
	mux.Get(PathStatus, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Status())
	})
	mux.Handle(PathMetrics, promhttp.HandlerFor(r.metrics.reg, promhttp.HandlerOpts{}))
	return mux
}

// authorizeRefresh lets a refresh through only from the operator or
// another site of this group, proved by a client certificate.
func (r *Runner) authorizeRefresh(next http.HandlerFunc) http.HandlerFunc {
	if r.cfg.TLS == nil {
		return next
	}
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRejectedRefreshes,
		Help: "POST /peer/refresh refused: no certificate, untrusted, or not the operator or a peer of the group."},
		[]string{"reason"})
	for _, reason := range []string{RefreshNoCertificate, RefreshUntrusted, RefreshWrongIdentity} {
		rejected.WithLabelValues(reason)
	}
	if err := r.metrics.reg.Register(rejected); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				rejected = c
			}
		}
	}
	return func(w http.ResponseWriter, req *http.Request) {
		code, reason, err := r.refreshAllowed(req)
		if err != nil {
			rejected.WithLabelValues(reason).Inc()
			r.log.Debug("refresh refused", "reason", reason, "error", err)
			writeJSON(w, code, map[string]string{"error": err.Error()})
			return
		}
		next(w, req)
	}
}

func (r *Runner) refreshAllowed(req *http.Request) (int, string, error) {
	pool, err := r.cfg.TLS.Pool()
	if err != nil {
		return http.StatusUnauthorized, RefreshUntrusted, err
	}
	id, err := pki.PeerIdentity(req.TLS, pool, time.Now())
	switch {
	case errors.Is(err, pki.ErrNoCertificate):
		return http.StatusUnauthorized, RefreshNoCertificate, err
	case err != nil:
		return http.StatusUnauthorized, RefreshUntrusted, err
	}
	if id.Kind == pki.KindOperator || (id.SameGroup(r.cfg.Namespace, r.cfg.Group) && id.Site != r.cfg.Site) {
		return 0, "", nil
	}
	return http.StatusForbidden, RefreshWrongIdentity,
		fmt.Errorf("%w: %s may not refresh %s", pki.ErrWrongIdentity, id, pki.SiteIdentity(r.cfg.Namespace, r.cfg.Group, r.cfg.Site))
}

// untrustedPeer is RejectUntrustedPeer when err says that whatever answered
// a contact is not whom the sidecar meant to reach: it spoke no TLS, or its
// certificate does not chain to the CA bundle or names someone else. It is
// "" for every other error (refused connections, timeouts, our own
// certificate refused by the server).
func untrustedPeer(err error) string {
	var (
		header  tls.RecordHeaderError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, pki.ErrUntrusted), errors.Is(err, pki.ErrNoIdentity), errors.Is(err, pki.ErrWrongIdentity),
		errors.As(err, &header), errors.As(err, &verify), errors.As(err, &unknown):
		return RejectUntrustedPeer
	}
	return ""
}
