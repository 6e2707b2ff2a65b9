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
	// per process start. A sidecar echoes it (with Seq) in its reports, so
	// the operator can tell what a report describes without comparing
	// clocks, neither of different machines nor of one across a step.
	Operator string `json:"operator,omitempty"`
	// KeyID names the public key that verifies Signature (pkg/protocol.KeyID).
	KeyID string `json:"keyID,omitempty"`
	// Signature is the operator's Ed25519 signature over every field above
	// (pkg/protocol.Payload). A sidecar relays it unchanged.
	Signature []byte `json:"signature,omitempty"`
	// Seq numbers the views one operator process serves, strictly
	// increasing (1, 2, ...): it means something only to the process named
	// by Operator, which alone reads it back from a sidecar's report echo.
	// It is served alongside the view and deliberately not signed
	// (pkg/protocol.Payload leaves it out): adding it to the signed bytes
	// would make every sidecar older than it reject the operator's views and
	// fence; no sidecar decides anything on it (adoption reads Generation
	// and ObservedAt); the echo only takes Seq from a view heard directly
	// from the operator over its TLS connection, never from a peer's relay;
	// and the operator refuses an echo of a Seq it has not served yet.
	Seq int64 `json:"seq,omitempty"`
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
	// QueryViewOperator and QueryViewSeq echo the Operator and Seq (decimal)
	// of the last view the sidecar received directly from the operator
	// before the mysqld read that the report describes. The operator counts
	// the report as evidence of a state observed after a moment of its own
	// (a sequence mark) only through them: no clock is compared.
	QueryViewOperator = "viewOperator"
	QueryViewSeq      = "viewSeq"
	// QueryViewObservedAt echoes that view's ObservedAt (RFC 3339 with
	// nanoseconds). Sidecars before QueryViewSeq echoed only it; an operator
	// with QueryViewSeq parses it but never counts it as evidence (a wall
	// clock can step), and sidecars still send it so that an operator before
	// QueryViewSeq keeps accepting their reports.
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

// PathSidecarUpgrade is a sidecar's POST /sidecar/upgrade, on its peer port
// and for the operator's certificate only: the body is a new sidecar
// binary, HeaderExecutableHash its expected SHA-256 (hex). The sidecar
// checks the hash, swaps the binary in and re-executes itself, leaving
// mysqld running. An empty body with no hash re-executes the binary as it
// is (kubectl bloodraven restart-inplace). See docs/upgrades.md.
const PathSidecarUpgrade = "/sidecar/upgrade"

// HeaderExecutableHash carries the expected SHA-256 (hex) of an upgrade's body.
const HeaderExecutableHash = "X-Bloodraven-Executable-Sha256"

// QueryExecutableHash is the optional report parameter of GET /active-site
// that carries the SHA-256 (hex) of the reporting sidecar's own binary.
const QueryExecutableHash = "executableHash"
