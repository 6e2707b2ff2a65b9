package v1alpha1

import "time"

// ActiveSiteView is the body of the operator's GET /active-site and of each
// sidecar's GET /peer/active-site: who the authority says is active.
//
// A sidecar adopts a view whose Generation is higher than its own; between
// equal generations it takes the later ObservedAt. Clocks are not compared
// across machines for anything else.
// +kubebuilder:object:generate=false
type ActiveSiteView struct {
	Namespace  string    `json:"namespace"`
	Group      string    `json:"group"`
	ActiveSite string    `json:"activeSite"`
	Generation int64     `json:"generation"`
	ObservedAt time.Time `json:"observedAt"`
	// Operator identifies the operator process that served the view: random
	// per process start. A sidecar echoes it (with ObservedAt) in its reports,
	// so the operator can tell what a report describes without comparing
	// clocks of different machines.
	Operator string `json:"operator,omitempty"`
	// KeyID names the public key that verifies Signature (pkg/protocol.KeyID).
	KeyID string `json:"keyID,omitempty"`
	// Signature is the operator's Ed25519 signature over every field above
	// (pkg/protocol.Payload). A sidecar relays it unchanged.
	Signature []byte `json:"signature,omitempty"`
	// Source says where the view came from as the operator served it:
	// "operator". It is not signed, and a sidecar that relays the view keeps
	// where it learned it in its own state rather than rewriting it.
	Source string `json:"source,omitempty"`
}

// Newer reports whether v should replace cur under the adoption rule.
func (v ActiveSiteView) Newer(cur ActiveSiteView) bool {
	if v.Generation != cur.Generation {
		return v.Generation > cur.Generation
	}
	return v.ObservedAt.After(cur.ObservedAt)
}

// Query parameters of GET /active-site. Sidecars report their own state
// through the optional ones; the operator records the report to confirm fences.
const (
	QueryNamespace  = "namespace"
	QueryGroup      = "group"
	QuerySite       = "site"
	QueryGeneration = "generation"
	// QueryFenced is "true" when the reporting sidecar's mysqld is read-only.
	QueryFenced = "fenced"
	// QueryMysqld is "up" or "down": whether the sidecar could reach its mysqld.
	QueryMysqld = "mysqld"
	// QueryBoot is a random id of the reporting sidecar process, new at
	// every start: the operator never counts one process's adoption for another.
	QueryBoot = "boot"
	// QueryViewOperator and QueryViewObservedAt echo the Operator and
	// ObservedAt (RFC 3339 with nanoseconds) of the last view the sidecar
	// received directly from the operator before the mysqld read that the
	// report describes. The operator counts the report as evidence of a
	// state observed after a moment of its own clock only through them.
	QueryViewOperator   = "viewOperator"
	QueryViewObservedAt = "viewObservedAt"
)

// HTTP paths of the topology protocol.
const (
	PathActiveSite     = "/active-site"
	PathPeerActiveSite = "/peer/active-site"
	SourceOperator     = "operator"
	SourcePeerPrefix   = "peer/"
)

// PathPeerRefresh is a sidecar's POST /peer/refresh: it asks the sidecar to
// fetch the views now rather than at its next tick. It carries no body, so it
// can make a sidecar look sooner but never tell it what to see. It answers
// 202; a sidecar that predates it answers 404 or 405.
const PathPeerRefresh = "/peer/refresh"
