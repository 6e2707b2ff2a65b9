package authority

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A nudge is a POST /peer/refresh to a site's sidecar: it makes the sidecar
// run its tick now, so it fetches /active-site at once instead of at the end
// of its peerCheckInterval. The operator nudges every site of a group when the
// view it publishes changes (a new generation or active site, and the first
// publication after the operator starts). The failover code still waits for
// the target's sidecar to hold the new generation before it makes the
// target writable; a nudge only makes that wait short.
//
// Nudges carry no data and are best effort: they are sent in the background,
// in parallel, each bounded by a short timeout; a failed one is counted and
// logged, and the sidecar's next tick catches up as it always did. A sidecar
// that predates the endpoint answers 404 or 405, which is ignored.

// SidecarURL gives the base URL of a site's sidecar, or "" when there is none
// to nudge.
type SidecarURL func(namespace, group, site string) string

// DefaultSidecarURL is the sidecar port of the site's Service, the address
// routing gives the sidecars for their peers by default.
func DefaultSidecarURL(namespace, group, site string) string {
	return fmt.Sprintf("https://%s:%d", routing.SiteServiceHost(namespace, group, site), routing.SidecarPort)
}

// defaultNudgeTimeout bounds one nudge unless NewNudger is given another.
const defaultNudgeTimeout = time.Second

// MetricNudges counts nudges by result: NudgeAccepted, NudgeUnsupported, NudgeFailed.
const MetricNudges = "bloodraven_sidecar_nudges_total"

// Results of a nudge, the values of MetricNudges' result label.
const (
	NudgeAccepted    = "accepted"
	NudgeUnsupported = "unsupported"
	NudgeFailed      = "failed"
)

// errNudge wraps a nudge's failure.
var errNudge = errors.New("nudge")

// Nudger sends the nudges. Each site has at most one in flight: a change
// published meanwhile is sent once more when it ends.
type Nudger struct {
	url     SidecarURL
	client  *http.Client
	timeout time.Duration
	log     logr.Logger
	results *prometheus.CounterVec

	mu    sync.Mutex
	last  map[types.NamespacedName]viewKey // last view each group was nudged for
	sites map[siteKey]*nudgeSlot
}

// viewKey is what of a view a nudge is for.
type viewKey struct {
	site string
	gen  int64
}

type nudgeSlot struct {
	busy  bool // a nudge is in flight
	again bool // and another one is due when it ends
}

// NewNudger returns a Nudger; url nil means DefaultSidecarURL, timeout 0 the
// default. The counter is registered on reg unless it is nil.
func NewNudger(url SidecarURL, timeout time.Duration, reg prometheus.Registerer, log logr.Logger) *Nudger {
	if url == nil {
		url = DefaultSidecarURL
	}
	if timeout <= 0 {
		timeout = defaultNudgeTimeout
	}
	n := &Nudger{url: url, timeout: timeout, log: log,
		client: &http.Client{Timeout: timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute, ResponseHeaderTimeout: timeout}},
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricNudges,
			Help: "POST /peer/refresh sent to sidecars after a published view changed, by result."}, []string{"result"}),
		last: map[types.NamespacedName]viewKey{}, sites: map[siteKey]*nudgeSlot{}}
	for _, r := range []string{NudgeAccepted, NudgeUnsupported, NudgeFailed} {
		n.results.WithLabelValues(r)
	}
	if reg != nil {
		if err := reg.Register(n.results); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					n.results = c
				}
			}
		}
	}
	return n
}

// Published is the Registry's hook: it is called with every view published
// and sites, the group's sites. It nudges them all when the view differs
// from the last one nudged for, and returns at once.
func (n *Nudger) Published(view v1alpha1.ActiveSiteView, sites []string) {
	key := types.NamespacedName{Namespace: view.Namespace, Name: view.Group}
	cur := viewKey{site: view.ActiveSite, gen: view.Generation}
	n.mu.Lock()
	defer n.mu.Unlock()
	if prev, ok := n.last[key]; ok && prev == cur {
		return
	}
	n.last[key] = cur
	for _, site := range sites {
		n.due(siteKey{group: key, site: site})
	}
}

// Site nudges one site's sidecar, and returns at once: after a promotion,
// so that the sidecar reads its mysqld writable and releases its write hold
// (pkg/sidecar, hold.go) without waiting for its next periodic tick.
func (n *Nudger) Site(group types.NamespacedName, site string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.due(siteKey{group: group, site: site})
}

// due makes one more nudge of k due: it starts k's sender, or tells the
// running one to send again. The caller holds n.mu.
func (n *Nudger) due(k siteKey) {
	slot := n.sites[k]
	if slot == nil {
		slot = &nudgeSlot{}
		n.sites[k] = slot
	}
	if slot.busy {
		slot.again = true
		return
	}
	slot.busy = true
	go n.run(k, slot)
}

// run sends k's nudges until none is due.
func (n *Nudger) run(k siteKey, slot *nudgeSlot) {
	for {
		if err := n.send(k); err != nil {
			n.log.V(1).Info("nudge failed; the sidecar's next tick catches up", "group", k.group.String(),
				"site", k.site, "error", err.Error())
		}
		n.mu.Lock()
		if !slot.again {
			slot.busy = false
			n.mu.Unlock()
			return
		}
		slot.again = false
		n.mu.Unlock()
	}
}

// send posts one nudge to k's sidecar and counts it. No URL means no sidecar
// to nudge; 404 and 405 mean a sidecar without the endpoint.
func (n *Nudger) send(k siteKey) error {
	base := n.url(k.group.Namespace, k.group.Name, k.site)
	if base == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	ctx = pki.WithIdentity(ctx, pki.SiteIdentity(k.group.Namespace, k.group.Name, k.site))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+v1alpha1.PathPeerRefresh, http.NoBody)
	if err != nil {
		n.results.WithLabelValues(NudgeFailed).Inc()
		return fmt.Errorf("%w %s/%s: %w", errNudge, k.group, k.site, err)
	}
	start := time.Now()
	resp, err := n.client.Do(req)
	if err != nil {
		n.results.WithLabelValues(NudgeFailed).Inc()
		return fmt.Errorf("%w %s/%s: %w", errNudge, k.group, k.site, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets the connection be reused
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		n.results.WithLabelValues(NudgeAccepted).Inc()
		n.log.V(1).Info("nudged", "group", k.group.String(), "site", k.site, "took", time.Since(start).String())
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		n.results.WithLabelValues(NudgeUnsupported).Inc()
	default:
		n.results.WithLabelValues(NudgeFailed).Inc()
		return fmt.Errorf("%w %s/%s: %s", errNudge, k.group, k.site, resp.Status)
	}
	return nil
}

// NotifyOnPublish makes the Registry call f with every view it publishes,
// under its lock and after the view is served; f must not block.
func (r *Registry) NotifyOnPublish(f func(v1alpha1.ActiveSiteView, []string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onPublish = f
}
