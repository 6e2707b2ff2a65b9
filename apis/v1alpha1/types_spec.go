package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SiteRole says what a site may become.
// +kubebuilder:validation:Enum=primary-candidate;dr-only;read-only
type SiteRole string

const (
	// RolePrimaryCandidate sites may be promoted automatically or on request.
	RolePrimaryCandidate SiteRole = "primary-candidate"
	// RoleDROnly sites replicate and are never promoted automatically nor by a planned failover.
	RoleDROnly SiteRole = "dr-only"
	// RoleReadOnly sites only serve reads and are never promoted.
	RoleReadOnly SiteRole = "read-only"
)

// Flavor selects the SQL dialect the operator speaks.
// +kubebuilder:validation:Enum=auto;mysql;mariadb
type Flavor string

const (
	// FlavorAuto reads @@version to choose.
	FlavorAuto Flavor = "auto"
	// FlavorMySQL forces MySQL 8.0.23+ SQL.
	FlavorMySQL Flavor = "mysql"
	// FlavorMariaDB forces MariaDB 10.11+ SQL.
	FlavorMariaDB Flavor = "mariadb"
)

// MysqlFailoverGroupSpec is what the user asks for.
// +kubebuilder:validation:XValidation:rule="self.sites.filter(s, !has(s.role) || s.role == 'primary-candidate').size() >= 2",message="a failover group needs at least two sites with role primary-candidate"
// +kubebuilder:validation:XValidation:rule="self.sites.all(a, self.sites.exists_one(b, b.name == a.name))",message="site names must be unique"
// +kubebuilder:validation:XValidation:rule="!self.mysql.semiSync.enabled || self.mysql.semiSync.maxSyncReplicas < self.sites.size()",message="mysql.semiSync.maxSyncReplicas must be less than the number of sites: the primary does not acknowledge its own commits"
// +kubebuilder:validation:XValidation:rule="self.mysql.semiSync.minSyncReplicas <= self.mysql.semiSync.maxSyncReplicas",message="mysql.semiSync.minSyncReplicas cannot be more than maxSyncReplicas"
// +kubebuilder:validation:XValidation:rule="self.mysql.flavor != 'mariadb' || self.mysql.semiSync.minSyncReplicas == 1",message="MariaDB waits for one semi-sync acknowledgement per commit: mysql.semiSync.minSyncReplicas must be 1 with flavor mariadb"
// +kubebuilder:validation:XValidation:rule="!has(self.services) || !has(self.services.additional) || self.services.additional.all(a, !self.sites.exists(s, s.name == a.name))",message="services.additional name cannot be a site's name: <group>-<site> is that site's own Service"
type MysqlFailoverGroupSpec struct {
	// Sites lists every site of the group, in priority order: when two sites
	// are equally fresh the earlier one wins, and the first primary-candidate
	// becomes active when the group is created.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	Sites []Site `json:"sites"`

	// MySQL configures mysqld on every site.
	// +kubebuilder:default={}
	// +optional
	MySQL MySQLSpec `json:"mysql"`

	// PollInterval is how often the operator probes every site.
	// +kubebuilder:default="2s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="pollInterval must be a positive duration such as 500ms, 2s or 1m"
	// +optional
	PollInterval metav1.Duration `json:"pollInterval"`

	// FailureThreshold is how many consecutive failed probes mark a site unreachable.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	FailureThreshold int32 `json:"failureThreshold"`

	// RecoveryThreshold is how many consecutive good probes bring an unreachable site back.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	RecoveryThreshold int32 `json:"recoveryThreshold"`

	// FailoverCooldown is the least time between two failovers, emergency or planned.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="failoverCooldown must be a positive duration such as 30s or 5m"
	// +optional
	FailoverCooldown metav1.Duration `json:"failoverCooldown"`

	// Sidecar configures the fencing sidecar next to every mysqld.
	// +kubebuilder:default={}
	// +optional
	Sidecar SidecarSpec `json:"sidecar"`

	// DNS publishes the group's hostname through an external-dns DNSEndpoint.
	// Without it no DNSEndpoint is made.
	// +optional
	DNS *DNSSpec `json:"dns,omitempty"`

	// Failover tunes emergency failovers.
	// +kubebuilder:default={}
	// +optional
	Failover FailoverSpec `json:"failover"`

	// PlannedFailover holds defaults for annotation-driven switchovers.
	// +kubebuilder:default={}
	// +optional
	PlannedFailover PlannedFailoverSpec `json:"plannedFailover"`

	// Dragonfly enables co-promotion of a Dragonfly (or Redis) cache with MySQL.
	// +kubebuilder:default={}
	// +optional
	Dragonfly DragonflySpec `json:"dragonfly"`

	// Updates says how a change of the sites' Pod template is rolled out
	// (docs/upgrades.md).
	// +kubebuilder:default={}
	// +optional
	Updates UpdatesSpec `json:"updates"`
	// Recovery tunes seeding a site by physical clone from another site
	// (docs/recovery.md).
	// +kubebuilder:default={}
	// +optional
	Recovery RecoverySpec `json:"recovery"`

	// Backup, when set, takes scheduled backups into an object store and
	// archives binlogs for point-in-time restore (docs/backups.md).
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// Services shapes the role Services: disabled defaults, a template
	// merged onto them, and additional Services (docs/routing.md).
	// +optional
	Services *ServicesSpec `json:"services,omitempty"`

	// Replication says when a replica may serve reads.
	// +kubebuilder:default={}
	// +optional
	Replication ReplicationSpec `json:"replication"`

	// Instance says how long mysqld gets to start and to stop, and bounds
	// the old primary's drain in a planned failover (docs/upgrades.md).
	// +kubebuilder:default={}
	// +optional
	Instance InstanceSpec `json:"instance"`
}

// Site is one failure domain: a zone, a set of nodes or a region.
// +kubebuilder:validation:XValidation:rule="has(self.zone) || has(self.nodeSelector)",message="each site needs a zone or a nodeSelector to say where it runs"
type Site struct {
	// Name is the site's DNS label, used in object names and in annotations.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="site name must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!(self in ['primary', 'replicas', 'any'])",message="site name cannot be primary, replicas or any: <group>-<name> would be a role Service's name"
	// +kubebuilder:validation:XValidation:rule="self != 'dragonfly' && !self.endsWith('-dragonfly')",message="site name cannot be dragonfly or end in -dragonfly: <group>-<name> would be a cache Service's name"
	Name string `json:"name"`

	// Role says whether the site may become primary.
	// +kubebuilder:default=primary-candidate
	// +optional
	Role SiteRole `json:"role"`

	// Zone places the site's Pods with topology.kubernetes.io/zone=<zone>.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Zone string `json:"zone,omitempty"`

	// NodeSelector places the site's Pods; it is merged with Zone.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// TaintNodeSelector selects the nodes that are tainted after this site loses the primary role.
	// +optional
	TaintNodeSelector map[string]string `json:"taintNodeSelector,omitempty"`

	// LoadBalancerIP, when set, is the address published in DNS for this site
	// instead of its Service's cluster address.
	// +kubebuilder:validation:MaxLength=45
	// +optional
	LoadBalancerIP string `json:"loadBalancerIP,omitempty"`
}

// MySQLSpec configures mysqld.
type MySQLSpec struct {
	// Flavor picks the SQL dialect; auto reads @@version.
	// +kubebuilder:default=auto
	// +optional
	Flavor Flavor `json:"flavor"`

	// Image is the mysqld container image.
	// +kubebuilder:default="mariadb:10.11"
	// +kubebuilder:validation:MinLength=1
	// +optional
	Image string `json:"image"`

	// Config holds extra my.cnf lines appended to the [mysqld] section.
	// Bloodraven's own settings (read_only, GTID, ROW, server_id) always win.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	Config string `json:"config,omitempty"`

	// Storage sizes each site's PVC.
	// +kubebuilder:default={}
	// +optional
	Storage StorageSpec `json:"storage"`

	// Credentials names the Secrets that hold each account's password.
	// Secrets that do not exist are generated.
	// +kubebuilder:default={}
	// +optional
	Credentials CredentialsSpec `json:"credentials"`

	// TLS configures TLS for application clients. mysqld always serves TLS
	// with its site's certificate, and replication between sites always
	// uses it; this only decides whether plain connections are refused.
	// +kubebuilder:default={}
	// +optional
	TLS MySQLTLSSpec `json:"tls"`

	// SemiSync configures semi-synchronous replication between the sites.
	// +kubebuilder:default={}
	// +optional
	SemiSync SemiSyncSpec `json:"semiSync"`
}

// StorageSpec sizes a site's volume.
type StorageSpec struct {
	// Size of the PVC.
	// +kubebuilder:default="10Gi"
	// +optional
	Size resource.Quantity `json:"size"`

	// StorageClassName of the PVC; empty uses the cluster default.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// SecretRef names a Secret in the group's namespace with keys username and password.
type SecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// CredentialsSpec names a Secret per account role. An empty reference means
// <group>-<role>, generated when absent.
type CredentialsSpec struct {
	// Operator is the account the operator and sidecars use; it may change read_only.
	// +optional
	Operator *SecretRef `json:"operator,omitempty"`
	// Replication is the account replicas connect with.
	// +optional
	Replication *SecretRef `json:"replication,omitempty"`
	// Application is the account applications use; it never holds READ_ONLY ADMIN or SUPER.
	// +optional
	Application *SecretRef `json:"application,omitempty"`
	// Monitor is a read-only account for probes and exporters.
	// +optional
	Monitor *SecretRef `json:"monitor,omitempty"`
}
