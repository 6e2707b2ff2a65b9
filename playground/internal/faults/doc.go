// Package faults owns the network faults of the local cluster: partitions
// between groups of addresses, and isolation of a stopped node, written as
// drop rules in a dedicated nft table of the core namespace. All traffic
// between Pods, nodes and the control plane passes through that namespace.
package faults
