// Package load is the playground's client side: writers that insert unique ids
// into a failover group the way an application would (through the group's DNS
// name, or through a fixed address such as the -primary Service), a prober that
// tries a tiny write on every site directly, and a pure checker that turns the
// recorded history into the promises' verdicts: acknowledged writes lost,
// write-unavailability windows, and moments when two sites accepted writes.
//
// Every attempt is recorded with its start, end, outcome and target, so a
// history can be saved as JSON and checked again later. The package knows
// nothing about the local cluster: callers give it a dial function and an
// address source.
package load
