// Package plugin is the logic of kubectl-bloodraven, the kubectl plugin for
// MysqlFailoverGroups: connecting with kubectl's kubeconfig rules (Connect),
// printing a group's status (Status), asking for a planned failover and
// following it (Switchover, WaitPlanned), and editing the administrator's
// fenced-sites annotation (Fence, Unfence).
//
// Every function takes a controller-runtime client, so tests drive them
// against a real API server; cmd/kubectl-bloodraven only parses flags.
package plugin
