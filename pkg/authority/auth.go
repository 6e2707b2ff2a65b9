package authority

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// A report (GET /active-site with site=) is fence evidence and renews the
// site's lease in the operator's books, so it must come from the site it
// names. Over HTTPS, the sidecar proves that with its site certificate:
// none is refused with 401, one naming another site with 403. Over the
// plain-HTTP port, which stays open for sidecars older than the
// authenticated transport, reports are accepted only until the group is
// authenticated: once every site of the group has reported with a valid
// certificate, status.reportsAuthenticatedAt is set and never cleared, and
// plain reports are refused from then on. A site that has reported with a
// certificate is refused plain reports at once, before the whole group is.
// A refused report changes nothing: no evidence, no lease renewal, no view.

// MetricRejectedReports counts refused reports by reason.
const MetricRejectedReports = "bloodraven_rejected_reports_total"

// Reasons a report is refused: the values of MetricRejectedReports' reason label.
const (
	RejectNoCertificate = "no-certificate"
	RejectUntrusted     = "untrusted"
	RejectWrongIdentity = "wrong-identity"
	RejectPlaintext     = "plaintext"
	RejectStatusUnknown = "status-unknown"
)

// rejectEventGap is the least time between two ReportRejected Events of
// one group and reason.
const rejectEventGap = time.Minute

// ReportAuth decides whether a report may be recorded.
type ReportAuth struct {
	trust    func() (*x509.CertPool, error)
	reader   client.Reader
	recorder events.EventRecorder
	now      func() time.Time
	log      logr.Logger
	rejected *prometheus.CounterVec

	mu        sync.Mutex
	sites     map[siteKey]bool              // sites that reported with a valid certificate
	groups    map[types.NamespacedName]bool // groups known authenticated
	lastEvent map[string]time.Time          // group/reason -> last Event
	lastLog   map[types.NamespacedName]time.Time
}

// NewReportAuth returns a ReportAuth that trusts the CA bundle trust gives,
// reads groups with reader (for the persisted switch and for Events), and
// registers its counter on reg unless nil.
func NewReportAuth(trust func() (*x509.CertPool, error), reader client.Reader, rec events.EventRecorder,
	reg prometheus.Registerer, log logr.Logger) *ReportAuth {
	a := &ReportAuth{trust: trust, reader: reader, recorder: rec, now: time.Now, log: log,
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRejectedReports,
			Help: "Sidecar reports refused, by reason: they did not prove the site they name, or could not be read, or echoed a view never served."}, []string{"reason"}),
		sites: map[siteKey]bool{}, groups: map[types.NamespacedName]bool{}, lastEvent: map[string]time.Time{},
		lastLog: map[types.NamespacedName]time.Time{}}
	for _, r := range []string{RejectNoCertificate, RejectUntrusted, RejectWrongIdentity, RejectPlaintext, RejectStatusUnknown,
		RejectMalformed, RejectForgedEcho} {
		a.rejected.WithLabelValues(r)
	}
	if reg != nil {
		if err := reg.Register(a.rejected); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					a.rejected = c
				}
			}
		}
	}
	return a
}

// Rejected is the counter of refused reports (tests read it).
func (a *ReportAuth) Rejected() *prometheus.CounterVec { return a.rejected }

// Check returns nil when req may report for site of group, whose sites are
// sites; otherwise an error wrapping ErrUnauthenticated or ErrForbidden,
// after counting, logging and (rate-limited) an Event.
func (a *ReportAuth) Check(req *http.Request, group types.NamespacedName, site string, sites []string) error {
	reason, err := a.decide(req, group, site, sites)
	if err == nil {
		return nil
	}
	a.reject(req.Context(), group, site, reason, err)
	return err
}

func (a *ReportAuth) decide(req *http.Request, group types.NamespacedName, site string, sites []string) (string, error) {
	if req.TLS == nil {
		return a.decidePlain(req.Context(), group, site)
	}
	pool, err := a.trust()
	if err != nil {
		return RejectUntrusted, fmt.Errorf("%w: no CA bundle: %w", ErrUnauthenticated, err)
	}
	id, err := pki.PeerIdentity(req.TLS, pool, a.now())
	switch {
	case errors.Is(err, pki.ErrNoCertificate):
		return RejectNoCertificate, fmt.Errorf("%w: a report needs the site's client certificate", ErrUnauthenticated)
	case err != nil:
		return RejectUntrusted, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if want := pki.SiteIdentity(group.Namespace, group.Name, site); id != want {
		return RejectWrongIdentity, fmt.Errorf("%w: certificate of %s reports for %s", ErrForbidden, id, want)
	}
	a.authenticated(group, site, sites)
	return "", nil
}

// decidePlain accepts a report over plain HTTP only while neither the site
// nor the group has switched to certificates.
func (a *ReportAuth) decidePlain(ctx context.Context, group types.NamespacedName, site string) (string, error) {
	a.mu.Lock()
	done := a.groups[group] || a.sites[siteKey{group: group, site: site}]
	a.mu.Unlock()
	if done {
		return RejectPlaintext, fmt.Errorf("%w: %s reports with its certificate over HTTPS now", ErrUnauthenticated, site)
	}
	if a.reader == nil {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var g v1alpha1.MysqlFailoverGroup
	if err := a.reader.Get(ctx, group, &g); err != nil {
		// Fail closed: refusing costs a lease renewal, accepting might let
		// a forged report confirm a fence.
		return RejectStatusUnknown, fmt.Errorf("%w: cannot tell whether %s still accepts plain reports: %w",
			ErrUnauthenticated, group, err)
	}
	if g.Status.ReportsAuthenticatedAt != nil {
		a.mu.Lock()
		a.groups[group] = true
		a.mu.Unlock()
		return RejectPlaintext, fmt.Errorf("%w: group %s accepts only authenticated reports", ErrUnauthenticated, group)
	}
	return "", nil
}

// authenticated notes a valid report; once every site of the group made
// one, the group is authenticated (persisted by MarkAuthenticated).
func (a *ReportAuth) authenticated(group types.NamespacedName, site string, sites []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sites[siteKey{group: group, site: site}] = true
	for _, s := range sites {
		if !a.sites[siteKey{group: group, site: s}] {
			return
		}
	}
	a.groups[group] = true
}

// MarkAuthenticated is the poll loop's hook before it writes status: it
// sets status.reportsAuthenticatedAt once the group is authenticated, and
// learns a switch persisted earlier (by a previous operator).
func (a *ReportAuth) MarkAuthenticated(g *v1alpha1.MysqlFailoverGroup, now time.Time) {
	if a == nil {
		return
	}
	key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.Status.ReportsAuthenticatedAt != nil {
		a.groups[key] = true
		return
	}
	if a.groups[key] {
		t := stamp(now)
		g.Status.ReportsAuthenticatedAt = &t
	}
}

// stamp is a status time: RFC 3339 keeps whole seconds, as the poll loop's
// status times do, so a write does not look like a change.
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// reject counts a refused report, logs it at most once per second per
// group, and raises a Warning Event at most once per rejectEventGap per
// group and reason.
func (a *ReportAuth) reject(ctx context.Context, group types.NamespacedName, site, reason string, err error) {
	a.rejected.WithLabelValues(reason).Inc()
	now := a.now()
	key := group.String() + "/" + reason
	a.mu.Lock()
	logNow := now.Sub(a.lastLog[group]) >= time.Second
	if logNow {
		a.lastLog[group] = now
	}
	eventNow := now.Sub(a.lastEvent[key]) >= rejectEventGap
	if eventNow {
		a.lastEvent[key] = now
	}
	a.mu.Unlock()
	if logNow {
		a.log.Info("report refused", "group", group.String(), "site", site, "reason", reason, "error", err.Error())
	}
	if !eventNow || a.recorder == nil || a.reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	var g v1alpha1.MysqlFailoverGroup
	if a.reader.Get(ctx, group, &g) != nil {
		return
	}
	a.recorder.Eventf(&g, nil, corev1.EventTypeWarning, v1alpha1.EventReportRejected, "Report",
		"report for site %q refused (%s): %v", site, reason, err)
}

// UseCredentials makes nudges to https:// sidecars present the operator's
// certificate and accept only the nudged site's identity (send puts it on
// the request's context). nil leaves the client as it is.
func (n *Nudger) UseCredentials(src pki.Source) {
	if src == nil {
		return
	}
	if tr, ok := n.client.Transport.(*http.Transport); ok {
		tr.DialTLSContext = pki.DialTLS(src, pki.ExpectFromContext, time.Now)
	}
}
