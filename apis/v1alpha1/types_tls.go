package v1alpha1

// MySQLTLSSpec configures TLS for the application's connections to mysqld.
type MySQLTLSSpec struct {
	// RequireSecureTransport sets require_secure_transport=ON on every site:
	// mysqld refuses TCP logins that do not use TLS. Connections over the
	// Pod-local unix socket (the sidecar's) still work. Off by default, so
	// existing clients keep working; mysqld serves TLS either way.
	// +kubebuilder:default=false
	// +optional
	RequireSecureTransport bool `json:"requireSecureTransport"`
}
