package failover

import (
	"context"
	"time"

	"k8s.io/utils/clock"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// DB is what the sequence does to the sites' mysqld, by site name. Every call
// must end by its context's deadline. pkg/controller implements it over
// pkg/mysql; internal/sim over its model.
type DB interface {
	// Fence stops application writes on site and kills application
	// connections; nil means the site is verified read-only.
	Fence(ctx context.Context, site string) error
	// DrainRelayLog waits up to timeout until site has applied what it
	// received. A timeout or a site without replication is not fatal.
	DrainRelayLog(ctx context.Context, site string, timeout time.Duration) error
	// Promote forgets replication on site, makes it writable and returns its
	// executed GTID set, and what its IO thread held received as its
	// replication stopped (the reset drops what of it was not applied). It
	// holds the site's topology lock throughout, and sets opts.SemiSync
	// under it (mysql.Instance.Promote).
	Promote(ctx context.Context, site string, opts PromoteOptions) (Promotion, error)
	// ReplicateFrom makes site a read-only replica of source.
	ReplicateFrom(ctx context.Context, site, source string) error
	// SalvageRead reads whether site refuses application writes now and
	// its executed GTID set (salvage.go).
	SalvageRead(ctx context.Context, site string) (fenced bool, executed gtid.Set, err error)
	// RelayRead reads site's executed set, what its IO thread holds
	// received, and whether its SQL thread applies: a drain that ran out
	// is judged from it (received.go, topology.JudgeDrain).
	RelayRead(ctx context.Context, site string) (topology.RelayRead, error)
	// Salvage makes site, kept read-only, take what source executed up to
	// until by replicating from source with an UNTIL condition, and stops
	// that replication before it returns, by ctx's deadline. It refuses,
	// touching nothing, when source is not fenced as it starts, or when
	// site is not read-only (it never sets that itself). It returns
	// site's executed set read after the stop (empty when unknown), also
	// with an error (mysql.Instance.SalvageFrom).
	//
	// expect is site's executed set as SalvageRead read it: site must
	// still hold exactly that, and still replicate from source, when the
	// salvage starts (ErrSalvageTargetMoved, nothing touched, otherwise).
	//
	// part, when set, is site's semi-sync part under source, set under
	// site's topology lock after those checks and before the start.
	Salvage(ctx context.Context, site, source string, until, expect gtid.Set, part *topology.SemiSyncRole) (gtid.Set, error)
	// ArmLeaseFence makes site's mysqld fence itself after the given time
	// (whole seconds), unless armed again first; it works on a fenced
	// site, before the step that makes it writable (leasefence.go).
	ArmLeaseFence(ctx context.Context, site string, after time.Duration) error
	// ConfigureSemiSync gives role.Site its part in semi-sync replication
	// (source, replica, or neither); it works on a fenced site, before
	// the step that makes it writable or repoints it (semisync.go).
	ConfigureSemiSync(ctx context.Context, role topology.SemiSyncRole) error
}

// PromoteOptions is what DB.Promote also does under the site's topology
// lock, right before it makes the site writable.
type PromoteOptions struct {
	// SemiSync is the site's semi-sync source part (PrepareWritable set it
	// already; a deposed leader's salvage may have changed it since). Nil
	// with semi-sync off.
	SemiSync *topology.SemiSyncRole
	// SemiSyncBestEffort: a failure to set SemiSync does not stop the
	// promotion (dataDurability preferred).
	SemiSyncBestEffort bool
}

// Promotion is what DB.Promote found.
type Promotion struct {
	// Executed is the site's executed set, captured before it was made
	// writable.
	Executed gtid.Set
	// Retrieved is what its IO thread held received as its replication
	// stopped for the reset; RetrievedUnknown when that could not be read.
	Retrieved        gtid.Set
	RetrievedUnknown bool
}

// Router moves clients. It is the part of pkg/routing's Router the sequence
// uses; the method names are routing's.
type Router interface {
	SetRoleLabels(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, primarySite string) error
	PointDNS(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (changed bool, err error)
	TaintSite(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) error
}

// Persister writes g.Status. It must not return before the write is durable,
// and it updates g (resourceVersion) on success.
type Persister interface {
	PersistStatus(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error
	// PersistStatusExclusive writes g.Status only if no other writer has
	// written the group since this one last read or wrote it (an
	// optimistic lock on the resourceVersion the pass decided on): it
	// never re-reads and writes again on top, and it writes even when
	// nothing changed, so that the check is made. An error means the
	// write may not have happened, and on a conflict that it did not.
	PersistStatusExclusive(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error
}

// Publisher serves the persisted topology view on /active-site.
type Publisher interface {
	Publish(g *v1alpha1.MysqlFailoverGroup)
}

// Notifier records what happened: Kubernetes Events and metrics.
type Notifier interface {
	// Event records an Event on g; eventType is "Normal" or "Warning" and
	// reason one of the v1alpha1.Event* constants.
	Event(g *v1alpha1.MysqlFailoverGroup, eventType, reason, message string)
	// FailoverCompleted counts a completed failover of kind.
	FailoverCompleted(g *v1alpha1.MysqlFailoverGroup, kind v1alpha1.FailoverKind)
	// DNSFlipped counts a change of the DNSEndpoint's target.
	DNSFlipped(g *v1alpha1.MysqlFailoverGroup)
	// Salvaged counts n transactions a failover's target took from the old
	// primary's binlogs before its promotion (salvage.go).
	Salvaged(g *v1alpha1.MysqlFailoverGroup, n int64)
}

// Event types, as Kubernetes spells them.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)

// Env is everything Emergency acts through.
type Env struct {
	DB        DB
	Router    Router
	Persister Persister
	Publisher Publisher
	Notifier  Notifier
	Clock     clock.PassiveClock
}

// Settings bound the sequence. Zero fields take the defaults of withDefaults.
type Settings struct {
	// LeaseTimeout and PeerCheckInterval are spec.sidecar's.
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	// DrainTimeout bounds the wait for the target's relay log (default 30 s).
	DrainTimeout time.Duration
	// DrainSlowTimeout is spec.failover.drainSlowTimeout: it bounds, past
	// DrainTimeout, the wait for a target whose applier is slow but
	// advances (within DrainTimeout each time) on a relay log that still
	// holds what it received (default 5 min; topology.JudgeDrain).
	DrainSlowTimeout time.Duration
	// CallTimeout bounds one SQL or Kubernetes call (default 5 s).
	CallTimeout time.Duration
	// FenceTimeout bounds one SQL fence attempt on an old primary that may
	// not answer (default 1 s); keep it near the probe deadline.
	FenceTimeout time.Duration
	// AdoptionWait bounds how long promotion waits for the target's sidecar to
	// hold the new generation (default 2 x PeerCheckInterval).
	AdoptionWait time.Duration
	// SalvageTimeout is spec.failover.salvageTimeout: how long, over every
	// pass, an emergency failover may spend taking the old primary's
	// missing tail into the target (salvage.go). Zero turns salvage off;
	// it has no default here (the API server's is 10 s).
	SalvageTimeout time.Duration
	// LeaseFenceTimeout bounds arming a site's lease fence before it is
	// made writable (default 2 s); the fence is armed that much sooner.
	LeaseFenceTimeout time.Duration
	// CacheTakeover is, with spec.dragonfly enabled, the longest a planned
	// failover's cache takeover may take in one pass (maxSyncWait); zero
	// without Dragonfly.
	CacheTakeover time.Duration
}

// PassBudget is the longest one pass of a group's loop may legitimately
// take with these settings: a relay-log drain (DrainTimeout), the whole
// salvage budget (SalvageTimeout, spent in one pass at worst), two fence
// attempts, a cache takeover (CacheTakeover), four lease-fence arms, and
// sixteen bounded calls (claims,
// promotion, routing, status writes, rollout, reclone, read routes). A
// liveness check that judges a loop hung sooner would kill the operator
// inside a failover step it is entitled to finish.
func (s Settings) PassBudget() time.Duration {
	s = s.withDefaults()
	return s.DrainTimeout + s.SalvageTimeout + s.CacheTakeover + 2*s.FenceTimeout + 4*s.LeaseFenceTimeout + 16*s.CallTimeout
}

func (s Settings) withDefaults() Settings {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.LeaseTimeout, 20*time.Second)
	def(&s.PeerCheckInterval, 5*time.Second)
	def(&s.DrainTimeout, 30*time.Second)
	def(&s.DrainSlowTimeout, 5*time.Minute)
	def(&s.CallTimeout, 5*time.Second)
	def(&s.FenceTimeout, time.Second)
	def(&s.AdoptionWait, 2*s.PeerCheckInterval)
	def(&s.LeaseFenceTimeout, 2*time.Second)
	return s
}

// SettingsFor reads the spec's sidecar timings into Settings, keeping the
// operator-wide bounds of base.
func SettingsFor(g *v1alpha1.MysqlFailoverGroup, base Settings) Settings {
	base.LeaseTimeout = g.Spec.Sidecar.LeaseTimeout.Duration
	base.PeerCheckInterval = g.Spec.Sidecar.PeerCheckInterval.Duration
	base.SalvageTimeout = 0
	if d := g.Spec.Failover.SalvageTimeout; d != nil {
		base.SalvageTimeout = d.Duration
	}
	if d := g.Spec.Failover.DrainSlowTimeout; d != nil {
		base.DrainSlowTimeout = d.Duration
	}
	base.CacheTakeover = 0
	if g.Spec.Dragonfly.Enabled {
		base.CacheTakeover = g.Spec.Dragonfly.PlannedFailover.MaxSyncWait.Duration
		if base.CacheTakeover <= 0 {
			base.CacheTakeover = topology.DefaultMaxSyncWait
		}
	}
	return base.withDefaults()
}
