// Package scenario holds the playground's chaos scenarios: each one sets up a
// failover group in the local cluster, runs the load (playground/load) against
// it, breaks something on purpose, waits, and checks the design's promises
// from the recorded history: no acknowledged write lost, never two sites
// accepting writes, plus the scenario's own expectation.
//
// Scenarios are registered by name (All, Lookup) and run against an Env: one
// local cluster with the operator installed from its Helm chart, shared by
// every scenario of a run; each scenario makes its own group in its own
// namespace. The Go tests (build tag playground), the playground CLI's
// scenario command and the benchmark all use the same registry.
package scenario
