package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecoverySpec tunes how a site is seeded with a physical copy of another
// site's data (docs/recovery.md).
// +kubebuilder:validation:XValidation:rule="!has(self.maxCloneRate) || !string(self.maxCloneRate).startsWith('-')",message="recovery.maxCloneRate must be zero (unlimited) or a positive number of bytes per second such as 100Mi"
type RecoverySpec struct {
	// MaxCloneRate caps the stream from the donor's sidecar, in bytes per
	// second (for example 100Mi). Absent or zero: unlimited.
	// +optional
	MaxCloneRate *resource.Quantity `json:"maxCloneRate,omitempty"`

	// CloneTimeout bounds one clone, from the first byte of the stream to
	// its end; a clone that takes longer is abandoned and its staging
	// removed.
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) > duration('0s')",message="recovery.cloneTimeout must be a positive duration such as 30m or 6h"
	// +optional
	CloneTimeout metav1.Duration `json:"cloneTimeout"`
}

// CloneRate is MaxCloneRate in bytes per second; zero is unlimited.
func (r RecoverySpec) CloneRate() int64 {
	if r.MaxCloneRate == nil || r.MaxCloneRate.Sign() <= 0 {
		return 0
	}
	return r.MaxCloneRate.Value()
}
