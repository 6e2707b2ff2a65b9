package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Defaults of spec.instance, also used when a stored object lacks them.
const (
	DefaultStartDelay = "30s"
	DefaultStopDelay  = "30s"
)

// InstanceSpec says how long mysqld gets to start and to stop
// (docs/upgrades.md, "Instance lifecycle").
type InstanceSpec struct {
	// StartDelay is how long mysqld may take to start, crash recovery
	// included, before a failing liveness check restarts it. Raise it for a
	// large buffer pool or a long redo log.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('5s') && duration(self) <= duration('24h')",message="instance.startDelay must be a duration from 5s to 24h, such as 30s or 10m"
	// +optional
	StartDelay metav1.Duration `json:"startDelay"`

	// StopDelay is the site Pod's termination grace period. On termination
	// the sidecar fences the site, lets application sessions finish for
	// half of it, kills those left, and shuts mysqld down cleanly in the
	// rest.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('5s') && duration(self) <= duration('1h')",message="instance.stopDelay must be a duration from 5s to 1h, such as 30s; mysqld needs a few seconds to stop cleanly"
	// +optional
	StopDelay metav1.Duration `json:"stopDelay"`

	// SwitchoverDelay bounds how long a planned failover drains the old
	// primary's application connections once it is fenced. Omitted,
	// plannedFailover.drainTimeout does.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="instance.switchoverDelay must be a duration from 1s to 24h, such as 30s"
	// +optional
	SwitchoverDelay *metav1.Duration `json:"switchoverDelay,omitempty"`
}
