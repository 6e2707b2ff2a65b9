package reclone

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// PathReclone is the sidecar's POST endpoint for a reclone's phases, on
// its peer port (mutual TLS).
const PathReclone = "/sidecar/reclone"

// maxBody bounds a request's JSON.
const maxBody = 16 << 10

// Request asks the site's sidecar for one phase of a reclone.
type Request struct {
	// ID identifies the reclone: the request and when it was accepted.
	ID    string                 `json:"id"`
	Phase v1alpha1.RecoveryPhase `json:"phase"`
	// Donor is the site the clone is taken from (Cloning).
	Donor string `json:"donor,omitempty"`
	// DivergentGtid is the site's errant set as of the acceptance.
	DivergentGtid string `json:"divergentGtid,omitempty"`
	// DonorGtid is the donor's executed set as the operator last observed
	// it (Cloning): the clone's binlog state keeps the donor's history of
	// other servers from it (gtid.CloneState).
	DonorGtid string `json:"donorGtid,omitempty"`
	// Generation is the topology generation the operator holds: a sidecar
	// holding a newer view refuses (the operator may be deposed).
	Generation int64 `json:"generation"`
	// Accepted is when the operator accepted the reclone (its StartTime in
	// status): a new reclone accepted before the one on record is refused.
	Accepted time.Time `json:"accepted,omitempty"`
}

// Answer is where the phase stands on the site, or why it was refused.
type Answer struct {
	Phase v1alpha1.RecoveryPhase `json:"phase,omitempty"`
	// Done is true once the phase's work finished.
	Done bool `json:"done,omitempty"`
	// Running is true while the work runs in the background.
	Running bool `json:"running,omitempty"`
	// Failed says why the phase cannot finish: the reclone fails.
	Failed string `json:"failed,omitempty"`
	// PreservedAt is the folder holding the site's earlier data.
	PreservedAt string `json:"preservedAt,omitempty"`
	// Position is the GTID position the site was seeded at (from Cloning).
	Position string `json:"position,omitempty"`
	// Message says what runs or last went wrong (a retried error).
	Message string `json:"message,omitempty"`
	// Reason and Error are set on a refusal (a 4xx or 5xx status).
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Refusal reasons (MetricRefusals' reason label, Answer.Reason).
const (
	RefuseNoTLS         = "no-tls"
	RefuseNoCertificate = "no-certificate"
	RefuseUntrusted     = "untrusted"
	RefuseWrongIdentity = "wrong-identity"
	RefuseMethod        = "method"
	RefuseMalformed     = "malformed"
	RefuseNoView        = "no-view"
	RefuseStale         = "stale-generation"
	RefuseAhead         = "view-behind"
	RefuseActive        = "active-site"
	RefuseWritable      = "writable"
	RefuseUnreadable    = "mysqld-unreadable"
	RefuseBusy          = "busy"
	RefuseUnknownDonor  = "unknown-donor"
	RefuseOtherReclone  = "other-reclone"
	RefuseOutOfOrder    = "out-of-order"
	RefuseStateFile     = "state-file"
	RefuseLayout        = "layout"
)

// refusalReasons are every reason, for the counter's zero values.
var refusalReasons = []string{RefuseNoTLS, RefuseNoCertificate, RefuseUntrusted, RefuseWrongIdentity, RefuseMethod,
	RefuseMalformed, RefuseNoView, RefuseStale, RefuseAhead, RefuseActive, RefuseWritable, RefuseUnreadable,
	RefuseBusy, RefuseUnknownDonor, RefuseOtherReclone, RefuseOutOfOrder, RefuseStateFile,
	RefuseLayout}

// Validate checks a request's form; self is the site's own name.
func (q Request) Validate(self string) error {
	switch q.Phase {
	case v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData, v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp:
	default:
		return fmt.Errorf("phase %q is not one a site carries out", q.Phase)
	}
	if q.ID == "" || len(q.ID) > 1100 || strings.IndexFunc(q.ID, notPrintable) >= 0 {
		return fmt.Errorf("id %q: empty, too long or not printable ASCII", q.ID)
	}
	if q.Generation <= 0 {
		return fmt.Errorf("generation %d: must be positive", q.Generation)
	}
	if q.Phase == v1alpha1.RecoveryCloning && (q.Donor == "" || q.Donor == self) {
		return fmt.Errorf("donor %q: a clone needs another site", q.Donor)
	}
	if _, err := gtid.ParseSet(q.DivergentGtid); err != nil {
		return fmt.Errorf("divergentGtid: %w", err)
	}
	if _, err := gtid.ParseSet(q.DonorGtid); err != nil {
		return fmt.Errorf("donorGtid: %w", err)
	}
	return nil
}

func notPrintable(r rune) bool { return r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' }
