package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every Bloodraven kind.
	GroupVersion = schema.GroupVersion{Group: "bloodraven.shipstream.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds and the meta types of this group version.
// It keeps this package free of controller-runtime: apis depends on apimachinery only.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MysqlFailoverGroup{}, &MysqlFailoverGroupList{}, &MysqlBackup{}, &MysqlBackupList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
