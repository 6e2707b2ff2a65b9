package authority

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// The in-place sidecar upgrade's sending end (docs/upgrades.md): the
// operator streams the sidecar binary it ships (--sidecar-binary, hashed
// once at start) to a site's sidecar, POST /sidecar/upgrade on its peer
// port, over mutual TLS with the operator's certificate and the site's
// identity checked, the expected SHA-256 in v1alpha1.HeaderExecutableHash.
// One upgrade per site at a time, in the background: the group loop only
// starts it (topology.PlanRollout says when) and reads whether it is busy.

// MetricSidecarUpgrades counts in-place upgrades sent, by result.
const MetricSidecarUpgrades = "bloodraven_sidecar_upgrades_sent_total"

// Results of an upgrade sent.
const (
	UpgradeAccepted = "accepted"
	UpgradeCurrent  = "current"
	UpgradeRefused  = "refused"
	UpgradeFailed   = "failed"
)

// UpgradeSettle is how long after an upgrade ended the site counts as busy:
// the new process reports its hash at its next tick; a failed upgrade is
// not retried sooner.
const UpgradeSettle = 30 * time.Second

// upgradeTimeout bounds one upgrade: the binary's transfer and the answer.
const upgradeTimeout = 2 * time.Minute

var errUpgrade = errors.New("sidecar upgrade")

// SidecarUpgrader sends in-place upgrades and restarts to sidecars.
type SidecarUpgrader struct {
	url     SidecarURL
	binary  string
	hash    string
	client  *http.Client
	log     logr.Logger
	results *prometheus.CounterVec
	now     func() time.Time

	mu    sync.Mutex
	sites map[siteKey]*upgradeSlot
}

type upgradeSlot struct {
	busy  bool
	ended time.Time
	err   error
}

// NewSidecarUpgrader hashes binary (the sidecar the operator ships) and
// returns an upgrader that sends it; url nil means DefaultSidecarURL. The
// counter is registered on reg unless it is nil.
func NewSidecarUpgrader(url SidecarURL, binary string, reg prometheus.Registerer, log logr.Logger) (*SidecarUpgrader, error) {
	h, err := exehash.File(binary)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUpgrade, err)
	}
	if url == nil {
		url = DefaultSidecarURL
	}
	u := &SidecarUpgrader{url: url, binary: binary, hash: h, log: log, now: time.Now, sites: map[siteKey]*upgradeSlot{},
		client: &http.Client{Timeout: upgradeTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}},
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricSidecarUpgrades,
			Help: "In-place upgrades and restarts sent to sidecars, by result."}, []string{"result"})}
	for _, r := range []string{UpgradeAccepted, UpgradeCurrent, UpgradeRefused, UpgradeFailed} {
		u.results.WithLabelValues(r)
	}
	if reg != nil {
		if err := reg.Register(u.results); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					u.results = c
				}
			}
		}
	}
	return u, nil
}

// UseCredentials makes the upgrader present src's certificate and check
// each site's identity.
func (u *SidecarUpgrader) UseCredentials(src pki.Source) {
	if src == nil {
		return
	}
	if tr, ok := u.client.Transport.(*http.Transport); ok {
		tr.DialTLSContext = pki.DialTLS(src, pki.ExpectFromContext, time.Now)
	}
}

// Hash is the SHA-256 of the sidecar binary the operator ships.
func (u *SidecarUpgrader) Hash() string { return u.hash }

// Busy reports whether an upgrade or restart of the site is in flight, or
// ended less than UpgradeSettle ago.
func (u *SidecarUpgrader) Busy(group types.NamespacedName, site string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.sites[siteKey{group: group, site: site}]
	return s != nil && (s.busy || u.now().Sub(s.ended) < UpgradeSettle)
}

// Upgrade starts streaming the binary to the site's sidecar, unless the
// site is Busy; done, when set, hears the result. It returns at once.
func (u *SidecarUpgrader) Upgrade(group types.NamespacedName, site string, done func(error)) bool {
	return u.start(group, site, true, done)
}

// Restart starts asking the site's sidecar to re-execute its binary as it
// is (kubectl bloodraven restart-inplace), unless the site is Busy.
func (u *SidecarUpgrader) Restart(group types.NamespacedName, site string, done func(error)) bool {
	return u.start(group, site, false, done)
}

func (u *SidecarUpgrader) start(group types.NamespacedName, site string, withBinary bool, done func(error)) bool {
	k := siteKey{group: group, site: site}
	u.mu.Lock()
	s := u.sites[k]
	if s != nil && (s.busy || u.now().Sub(s.ended) < UpgradeSettle) {
		u.mu.Unlock()
		return false
	}
	if s == nil {
		s = &upgradeSlot{}
		u.sites[k] = s
	}
	s.busy = true
	u.mu.Unlock()
	go func() {
		err := u.send(k, withBinary)
		u.mu.Lock()
		s.busy, s.ended, s.err = false, u.now(), err
		u.mu.Unlock()
		if done != nil {
			done(err)
		}
	}()
	return true
}

// send posts one upgrade (or, without the binary, one restart) and counts it.
func (u *SidecarUpgrader) send(k siteKey, withBinary bool) error {
	base := u.url(k.group.Namespace, k.group.Name, k.site)
	ctx, cancel := context.WithTimeout(context.Background(), upgradeTimeout)
	defer cancel()
	ctx = pki.WithIdentity(ctx, pki.SiteIdentity(k.group.Namespace, k.group.Name, k.site))
	var body io.Reader = http.NoBody
	var size int64
	if withBinary {
		f, err := os.Open(u.binary)
		if err != nil {
			u.results.WithLabelValues(UpgradeFailed).Inc()
			return fmt.Errorf("%w %s/%s: %w", errUpgrade, k.group, k.site, err)
		}
		defer func() { _ = f.Close() }()
		fi, err := f.Stat()
		if err != nil {
			u.results.WithLabelValues(UpgradeFailed).Inc()
			return fmt.Errorf("%w %s/%s: %w", errUpgrade, k.group, k.site, err)
		}
		body, size = f, fi.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+v1alpha1.PathSidecarUpgrade, body)
	if err != nil {
		u.results.WithLabelValues(UpgradeFailed).Inc()
		return fmt.Errorf("%w %s/%s: %w", errUpgrade, k.group, k.site, err)
	}
	req.ContentLength = size
	if withBinary {
		req.Header.Set(v1alpha1.HeaderExecutableHash, u.hash)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		u.results.WithLabelValues(UpgradeFailed).Inc()
		return fmt.Errorf("%w %s/%s: %w", errUpgrade, k.group, k.site, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusAccepted:
		u.results.WithLabelValues(UpgradeAccepted).Inc()
		u.log.Info("sidecar re-executes in place", "group", k.group.String(), "site", k.site, "binary", withBinary)
		return nil
	case http.StatusOK:
		u.results.WithLabelValues(UpgradeCurrent).Inc()
		return nil
	}
	u.results.WithLabelValues(UpgradeRefused).Inc()
	return fmt.Errorf("%w %s/%s: %s: %s", errUpgrade, k.group, k.site, resp.Status, msg)
}
