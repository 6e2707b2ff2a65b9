// Package v1alpha1 holds the MysqlFailoverGroup API: the spec users write, the
// status the operator keeps as the topology authority, their defaults and the
// CEL validation rules that reject bad specs with readable messages.
//
// It depends on nothing else in Bloodraven.
//
// +kubebuilder:object:generate=true
// +groupName=bloodraven.shipstream.io
package v1alpha1
