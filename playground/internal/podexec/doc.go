// Package podexec owns the last step before a container's program runs: it
// enters the Pod's network namespace, makes a private mount namespace, binds
// the Pod's volumes at their declared paths, and replaces itself with the
// program. The process kubelet re-executes its own binary into Main.
package podexec
