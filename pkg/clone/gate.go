package clone

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// MetricRejectedClones counts clone requests refused, by reason.
const MetricRejectedClones = "bloodraven_sidecar_rejected_clones_total"

// Reasons a clone request is refused.
const (
	RejectNoTLS          = "no-tls"
	RejectNoCertificate  = "no-certificate"
	RejectUntrusted      = "untrusted"
	RejectWrongIdentity  = "wrong-identity"
	RejectMethodNotAllow = "method"
)

// Gate lets a clone request through only from the operator or another
// site of the donor's own group, proved by a client certificate that
// chains to the CA bundle. A whole copy of the database is served to no one
// else: without TLS every request is refused (403, RejectNoTLS); without a
// valid certificate 401; with someone else's 403. Every refusal is counted
// (MetricRejectedClones) and logged.
type Gate struct {
	// TLS is the donor site's certificate source; nil refuses everyone.
	TLS                    pki.Source
	Namespace, Group, Site string
	// Registerer takes the refusal counter (nil: not exported).
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

// Wrap returns next behind the gate.
func (g Gate) Wrap(next http.Handler) http.Handler {
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRejectedClones,
		Help: "Clone requests refused: no TLS, no or untrusted certificate, or not the operator or a peer of the group."},
		[]string{"reason"})
	for _, r := range []string{RejectNoTLS, RejectNoCertificate, RejectUntrusted, RejectWrongIdentity, RejectMethodNotAllow} {
		rejected.WithLabelValues(r)
	}
	if g.Registerer != nil {
		if err := g.Registerer.Register(rejected); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					rejected = c
				}
			}
		}
	}
	log := g.Logger
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		code, reason, err := g.allowed(req)
		if err != nil {
			rejected.WithLabelValues(reason).Inc()
			log.Warn("clone request refused", "reason", reason, "remote", req.RemoteAddr, "error", err)
			http.Error(w, err.Error(), code)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// errNoTLS: the donor has no certificate, so it cannot tell who asks.
var errNoTLS = errors.New("clone: the donor serves clones only over mutual TLS")

func (g Gate) allowed(req *http.Request) (int, string, error) {
	if req.Method != http.MethodGet {
		return http.StatusMethodNotAllowed, RejectMethodNotAllow, fmt.Errorf("clone: method %s", req.Method)
	}
	if g.TLS == nil {
		return http.StatusForbidden, RejectNoTLS, errNoTLS
	}
	pool, err := g.TLS.Pool()
	if err != nil {
		return http.StatusUnauthorized, RejectUntrusted, err
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	id, err := pki.PeerIdentity(req.TLS, pool, now())
	switch {
	case errors.Is(err, pki.ErrNoCertificate):
		return http.StatusUnauthorized, RejectNoCertificate, err
	case err != nil:
		return http.StatusUnauthorized, RejectUntrusted, err
	}
	if id.Kind == pki.KindOperator || (id.SameGroup(g.Namespace, g.Group) && id.Site != g.Site) {
		return 0, "", nil
	}
	return http.StatusForbidden, RejectWrongIdentity,
		fmt.Errorf("%w: %s may not clone %s", pki.ErrWrongIdentity, id, pki.SiteIdentity(g.Namespace, g.Group, g.Site))
}
