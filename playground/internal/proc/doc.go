// Package proc owns child processes of the local cluster: each runs in its
// own process group, dies with its parent, writes to a log file, and enters
// its network and mount namespaces through the podexec helper (a re-execution
// of the current binary).
package proc
