// Package nsutil owns the Linux namespace plumbing of the local cluster: named
// network namespaces made with ip(8), running code or sockets inside one of
// them from a locked OS thread, and veth links between a Pod and the core.
package nsutil
