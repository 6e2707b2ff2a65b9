// Package proxy owns Service networking in the core namespace: a minimal
// kube-proxy that keeps nft DNAT rules from each ClusterIP and port to the
// ready endpoints of its EndpointSlices, and a small cluster DNS server that
// answers <service>.<namespace>.svc names and forwards the rest to BIND.
package proxy
