package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SidecarSpec configures the fencing sidecar.
// +kubebuilder:validation:XValidation:rule="!has(self.leaseTimeout) || !has(self.peerCheckInterval) || !(self.leaseTimeout.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && self.peerCheckInterval.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$')) || duration(self.leaseTimeout).getMilliseconds() >= 3 * duration(self.peerCheckInterval).getMilliseconds()",message="sidecar.leaseTimeout must be at least 3 × sidecar.peerCheckInterval, so that a healthy sidecar renews its lease several times before it expires"
type SidecarSpec struct {
	// LeaseTimeout is how long a sidecar keeps its mysqld writable without
	// hearing from the operator or any peer.
	// +kubebuilder:default="20s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="sidecar.leaseTimeout must be a positive duration such as 20s"
	// +optional
	LeaseTimeout metav1.Duration `json:"leaseTimeout"`

	// PeerCheckInterval is how often a sidecar asks the operator and its peers for the active site.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="sidecar.peerCheckInterval must be a positive duration such as 5s"
	// +optional
	PeerCheckInterval metav1.Duration `json:"peerCheckInterval"`

	// Image is the sidecar container image.
	// +kubebuilder:default="ghcr.io/shipstream/bloodraven-sidecar:latest"
	// +kubebuilder:validation:MinLength=1
	// +optional
	Image string `json:"image"`
}

// DNSSpec publishes the group's hostname.
type DNSSpec struct {
	// Hostname is the name clients use; it points at the active site.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?[.])*[a-z0-9]([-a-z0-9]*[a-z0-9])?[.]?$')",message="dns.hostname must be a DNS name such as orders.db.example.com"
	Hostname string `json:"hostname"`

	// TTL of the record, in seconds.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	TTL int64 `json:"ttl"`
}

// CooldownPolicy says what a planned failover does while the anti-flap cooldown runs.
// +kubebuilder:validation:Enum=reject;defer
type CooldownPolicy string

const (
	// CooldownReject fails the request with CooldownActive.
	CooldownReject CooldownPolicy = "reject"
	// CooldownDefer keeps the request and retries at retryAfter.
	CooldownDefer CooldownPolicy = "defer"
)

// FailoverSpec tunes emergency failovers.
type FailoverSpec struct {
	// SalvageTimeout bounds how long an emergency failover spends pulling
	// the old primary's missing binlog tail into the new primary, when the
	// old primary's mysqld answers again, fenced, before the promotion.
	// 0s turns salvage off. Omitted, the API server sets 10s; a group
	// that never went through it (nil) has salvage off.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('0s')",message="failover.salvageTimeout must be zero (salvage off) or a positive duration such as 10s; it cannot be negative"
	// +optional
	SalvageTimeout *metav1.Duration `json:"salvageTimeout,omitempty"`
	// DrainSlowTimeout bounds how long an emergency failover waits, in all,
	// for a target whose applier is slow but advances (it commits, or the
	// transaction it is inside changes rows) on a relay log that still
	// holds what it received, before what is left unapplied is given up
	// and counted lost. Under semi-sync that relay log may hold the only
	// copy of an acknowledged commit; writes stay stopped while it waits.
	// Omitted, the API server sets 5m; a group that never went through it
	// (nil) waits 5m.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="failover.drainSlowTimeout must be a duration from 1s to 24h, such as 5m: how long a failover waits for a slow but advancing applier"
	// +optional
	DrainSlowTimeout *metav1.Duration `json:"drainSlowTimeout,omitempty"`
}

// PlannedFailoverSpec holds defaults for planned failovers.
type PlannedFailoverSpec struct {
	// MaxLagWait bounds how long the target may take to catch up before rollback.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="plannedFailover.maxLagWait must be a positive duration such as 30s or 5m"
	// +optional
	MaxLagWait metav1.Duration `json:"maxLagWait"`

	// DrainTimeout bounds how long the fenced source's clients are killed before moving on.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="plannedFailover.drainTimeout must be a positive duration such as 30s"
	// +optional
	DrainTimeout metav1.Duration `json:"drainTimeout"`

	// OnCooldown is reject (fail the request) or defer (retry when the cooldown ends).
	// +kubebuilder:default=reject
	// +optional
	OnCooldown CooldownPolicy `json:"onCooldown"`
}

// SyncTimeoutPolicy says what a planned failover does when Dragonfly cannot catch up.
// +kubebuilder:validation:Enum=proceed;fail
type SyncTimeoutPolicy string

const (
	// SyncTimeoutProceed promotes MySQL anyway and records sessionsPreserved=false.
	SyncTimeoutProceed SyncTimeoutPolicy = "proceed"
	// SyncTimeoutFail rolls the planned failover back.
	SyncTimeoutFail SyncTimeoutPolicy = "fail"
)

// DragonflySpec enables Dragonfly co-promotion.
type DragonflySpec struct {
	// Enabled turns on a Dragonfly instance per site that follows the MySQL primary.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// Image is the Dragonfly container image.
	// +kubebuilder:default="docker.dragonflydb.io/dragonflydb/dragonfly:v1.25.0"
	// +optional
	Image string `json:"image"`

	// PlannedFailover tunes the Dragonfly phases of a planned failover.
	// +kubebuilder:default={}
	// +optional
	PlannedFailover DragonflyPlannedFailoverSpec `json:"plannedFailover"`
}

// DragonflyPlannedFailoverSpec tunes Dragonfly's part of a planned failover.
type DragonflyPlannedFailoverSpec struct {
	// MaxSyncWait bounds the wait for the target replica and the REPLTAKEOVER timeout.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="dragonfly.plannedFailover.maxSyncWait must be a positive duration such as 30s"
	// +optional
	MaxSyncWait metav1.Duration `json:"maxSyncWait"`

	// OnSyncTimeout is proceed (promote MySQL anyway) or fail (roll back).
	// +kubebuilder:default=proceed
	// +optional
	OnSyncTimeout SyncTimeoutPolicy `json:"onSyncTimeout"`
}

// DataDurability picks availability or durability when semi-sync replicas are missing.
// +kubebuilder:validation:Enum=preferred;required
type DataDurability string

const (
	// DurabilityPreferred lowers the acknowledgement count to the healthy replicas.
	DurabilityPreferred DataDurability = "preferred"
	// DurabilityRequired keeps the acknowledgement count and lets writes wait.
	DurabilityRequired DataDurability = "required"
)

// SemiSyncSpec configures semi-synchronous replication.
type SemiSyncSpec struct {
	// Enabled turns semi-sync on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// TimeoutMillis is how long a commit waits for an acknowledgement before falling back to async.
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutMillis int64 `json:"timeoutMillis"`

	// DataDurability is preferred (keep writing) or required (wait for replicas).
	// +kubebuilder:default=preferred
	// +optional
	DataDurability DataDurability `json:"dataDurability"`

	// MinSyncReplicas is how many replicas acknowledge each commit before
	// it returns (MySQL; MariaDB always waits for one). With preferred
	// durability the operator lowers the count to the healthy replicas,
	// never below one, and raises it back as they recover.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +optional
	MinSyncReplicas int32 `json:"minSyncReplicas"`

	// MaxSyncReplicas is how many replicas acknowledge at all: primary
	// candidates first, then the other sites in spec order.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +optional
	MaxSyncReplicas int32 `json:"maxSyncReplicas"`
}
