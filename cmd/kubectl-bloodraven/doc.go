// Command kubectl-bloodraven is the kubectl plugin for MysqlFailoverGroups
// (kubectl bloodraven ...): status, switchover, fence, unfence, restart-inplace, reclone and diverged. It parses
// flags and wires them to pkg/plugin, which holds the logic. See
// docs/kubectl-plugin.md.
package main
