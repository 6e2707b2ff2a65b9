package grouploop

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/dragonfly"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// Options are the operator-wide settings a loop reads.
type Options struct {
	// ProbeTimeout bounds one probe of a site; 0 means the group's pollInterval.
	ProbeTimeout time.Duration
	// MaxLag is the replica lag above which a group is Degraded (ReplicaLagging).
	MaxLag time.Duration
	// Failover are the failover sequences' timeouts before a group's spec
	// overrides them (failover.SettingsFor).
	Failover failover.Settings
	// OperatorExecutableHash is the SHA-256 of the operator's own binary,
	// written to status.operatorExecutableHash; "" when unknown.
	OperatorExecutableHash string
}

// Env is what the loops of every group share: the operator process's
// clients, books, clock and settings. Client, Reader, Resolver, Registry,
// Notifier, Metrics, Open and Clock are required; a loop never changes it.
type Env struct {
	// Client writes (status, Events) and reads through the cache.
	Client client.Client
	// Reader reads straight from the API server.
	Reader   client.Reader
	Resolver Resolver
	// Router moves clients; nil skips it (tests of the loop alone).
	Router failover.Router
	// Registry is what /active-site serves and what the sidecars reported.
	Registry *authority.Registry
	Notifier *Notifier
	Metrics  *Metrics
	// Auth, when set, is the API's report check: the loop persists the
	// group's switch to authenticated reports.
	Auth  *authority.ReportAuth
	Open  Opener
	Clock clock.Clock
	// Leader is asked before every step that makes a site writable; nil
	// means this process is the only operator.
	Leader  authority.Leadership
	Options Options
	Log     logr.Logger
	// Nudge asks a site's sidecar for a tick now; nil without nudges.
	Nudge func(group types.NamespacedName, site string)
	// Wake makes a group's running loop pass now; nil does nothing.
	Wake func(group types.NamespacedName)
	// Passed is told each pass that completed and did not stop its loop,
	// with the group's poll interval; nil tells no one. The operator's
	// liveness watches it (controller health.go).
	Passed func(group types.NamespacedName, interval time.Duration)
	// Budget is told, before a pass acts, the longest that pass may take
	// (failover.Settings.PassBudget from the group's spec as just read):
	// the liveness check must not judge the first pass after a restart, or
	// after a spec change, by an older or default budget. Nil tells no one.
	Budget func(group types.NamespacedName, budget time.Duration)
	// Upgrader sends in-place sidecar upgrades and restarts; nil when the
	// operator ships no sidecar binary (inplace.go).
	Upgrader SidecarUpgrader
	// Recloner runs reclone phases on the sites; nil: an accepted reclone
	// fails in Requested with nothing touched (reclone.go).
	Recloner Recloner
	// CacheAddr is where a site's Dragonfly is reached; nil means its
	// <group>-<site>-dragonfly Service on port 6379 (cache.go).
	CacheAddr func(namespace, group, site string) dragonfly.Endpoint
}

// NewNotifier returns the Notifier that records Events through rec (nil:
// none) and counts on m.
func NewNotifier(rec events.EventRecorder, m *Metrics) *Notifier {
	return &Notifier{rec: rec, metrics: m}
}
