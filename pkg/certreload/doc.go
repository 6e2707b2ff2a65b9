// Package certreload notices that a site's certificate files changed on
// disk and asks mysqld to load them again, so a rotated certificate is
// served without restarting mysqld and without a failover.
//
// The kubelet refreshes a mounted Secret by swapping a symlink, so the three
// files (certificate, key, CA bundle) change together. A Watcher polls their
// contents; when they differ from what it last had mysqld load, and the
// certificate and key form a valid pair, it calls Reload (pkg/mysql's
// ReloadTLS: FLUSH SSL or ALTER INSTANCE RELOAD TLS). A failed reload, or a
// pair that does not match, is retried at the next poll; mysqld keeps
// serving the certificate it has. Missing files mean the site has no
// certificate: nothing to do. The first poll after start reloads once, in
// case the files changed while no sidecar was watching.
package certreload
