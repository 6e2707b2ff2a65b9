// Package controller is the operator: a controller-runtime reconciler that
// converges each MysqlFailoverGroup's Kubernetes objects (through
// pkg/routing) and keeps one poll loop per group running (pkg/grouploop),
// on the elected leader only. What the operator believes and serves (the
// report Registry, the /active-site API, report authentication, view keys,
// nudges and leadership) is pkg/authority.
//
// The Reconciler reacts to spec, label and annotation changes, owned
// objects and the resync period, not to the loops' own status writes. It
// starts a group's loop before it converges the group's objects (failure
// detection must not wait on convergence), stops it when the group is
// gone, and wakes it when a planned-failover request appears, so the
// annotation is acted on at once rather than at the next poll (wake.go).
//
// GroupStepper (stepper.go) runs one group's loop a pass at a time on the
// Operator's clock, with a fresh loop memory: the simulation drives the
// real operator that way.
//
// Seams: Resolver maps (group, site) to a mysql.Config (default: the
// per-site Service); Router is pkg/routing's Router; Clock tells the time
// and runs the timers (k8s.io/utils/clock; the simulation steps its own);
// SidecarURL maps a site to the sidecar it nudges; Leadership is asked
// before every step that makes a site writable. Everything is wired by New,
// which cmd/operator calls.
package controller
