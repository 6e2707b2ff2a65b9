package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MysqlFailoverGroup is a set of MySQL or MariaDB sites of which exactly one is writable.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mfg,categories=bloodraven
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activeSite`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Generation",type=integer,JSONPath=`.status.topologyGeneration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.services) || !has(self.spec.services.additional) || self.spec.services.additional.all(a, size(self.metadata.name) + 1 + size(a.name) <= 63)",message="services.additional: the Service name <group>-<name> must be at most 63 characters; shorten the name"
type MysqlFailoverGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MysqlFailoverGroupSpec   `json:"spec"`
	Status MysqlFailoverGroupStatus `json:"status,omitempty"`
}

// MysqlFailoverGroupList is a list of MysqlFailoverGroups.
// +kubebuilder:object:root=true
type MysqlFailoverGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MysqlFailoverGroup `json:"items"`
}
