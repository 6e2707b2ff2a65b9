package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RecloneSiteAnnotation asks for a site's data to be replaced by a clone of
// a healthy site's: <site>:<first 8+ characters of the site's
// status.sites[].divergentGtid> for a diverged site, <site>:confirm=<group>
// for one that is not (docs/recovery.md); <site>:cancel stops a reclone
// that has not begun to replace the site's data. The operator removes it once
// answered: accepted (RecloneRequested) or refused (RecloneRejected).
const RecloneSiteAnnotation = "bloodraven.shipstream.io/reclone-site"

// RecoveryPhase is a step of a reclone (status.sites[].recovery.phase).
// +kubebuilder:validation:Enum=Requested;PreservingData;Cloning;CatchingUp;Rejoined;Failed
type RecoveryPhase string

// Reclone phases, in order; Rejoined and Failed end a reclone.
const (
	RecoveryRequested      RecoveryPhase = "Requested"
	RecoveryPreservingData RecoveryPhase = "PreservingData"
	RecoveryCloning        RecoveryPhase = "Cloning"
	RecoveryCatchingUp     RecoveryPhase = "CatchingUp"
	RecoveryRejoined       RecoveryPhase = "Rejoined"
	RecoveryFailed         RecoveryPhase = "Failed"
)

// Terminal reports whether a reclone in this phase is over.
func (p RecoveryPhase) Terminal() bool { return p == RecoveryRejoined || p == RecoveryFailed }

// Holds reports whether a site whose latest reclone is r must not be a
// failover candidate, a donor nor re-asserted: its data may be partly
// replaced. That is so from Cloning on, after a failure in Cloning or
// CatchingUp, and whenever an earlier reclone left the site's data
// incomplete (DataIncomplete), until a reclone rejoins. In Requested and
// PreservingData the site's data is whole (its replication is only
// stopped): it stays a candidate, so that a commit it alone acknowledged
// is not lost to a lagging site's promotion; a failover that targets it
// stops the reclone.
func (r *SiteRecovery) Holds() bool {
	switch {
	case r == nil || r.Phase == RecoveryRejoined:
		return false
	case r.DataIncomplete, r.Phase == RecoveryCloning, r.Phase == RecoveryCatchingUp:
		return true
	}
	return r.Phase == RecoveryFailed && (r.FailedPhase == RecoveryCloning || r.FailedPhase == RecoveryCatchingUp)
}

// SiteRecovery is a site's latest reclone, persisted before each phase so
// that a restarted operator resumes it.
type SiteRecovery struct {
	// Phase is the phase persisted last.
	Phase RecoveryPhase `json:"phase"`
	// Request is the annotation value this reclone answers.
	// +optional
	Request string `json:"request,omitempty"`
	// Donor is the site the clone is taken from, chosen when the request
	// was accepted.
	// +optional
	Donor string `json:"donor,omitempty"`
	// DivergentGtid is the site's divergent set when the request was
	// accepted: the errant transactions PreservingData saves.
	// +optional
	DivergentGtid string `json:"divergentGtid,omitempty"`
	// PreservedAt says where the errant transactions' binlogs and GTID set
	// were saved (a folder on the site's data volume).
	// +optional
	PreservedAt string `json:"preservedAt,omitempty"`
	// CatchUpGtid is the active site's executed set when CatchingUp began:
	// the site has rejoined once it holds it and replicates.
	// +optional
	CatchUpGtid string `json:"catchUpGtid,omitempty"`
	// CloneStarted is set, and persisted, once the operator judged in
	// Cloning that the site's data may be replaced and first asked its
	// sidecar to replace it: from then on the judgement is not made again
	// (the site may already hold nothing), and before it, it is never
	// skipped.
	// +optional
	CloneStarted bool `json:"cloneStarted,omitempty"`
	// FailedPhase is the phase that was running when the reclone failed;
	// empty when it stopped because its site became the active site or a
	// failover's target (the site is then not held).
	// After a failure in Cloning or CatchingUp the site's data may be
	// partly replaced: it stays held (never a candidate) until a reclone
	// of it rejoins (a new one carries DataIncomplete).
	// +optional
	FailedPhase RecoveryPhase `json:"failedPhase,omitempty"`
	// DataIncomplete is true when the reclone before this one left the
	// site's data possibly partly replaced (it held the site when this one
	// was accepted): the site stays held whatever becomes of this reclone,
	// cancelled or failed before Cloning included, until one rejoins.
	// +optional
	DataIncomplete bool `json:"dataIncomplete,omitempty"`
	// Reason is a CamelCase word saying why the reclone failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the phase to a person.
	// +optional
	Message string `json:"message,omitempty"`
	// StartTime is when the request was accepted.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// PhaseStartTime is when the current phase began.
	// +optional
	PhaseStartTime *metav1.Time `json:"phaseStartTime,omitempty"`
	// CompletionTime is when the reclone ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// RecloneRejection is the latest refused reclone request.
type RecloneRejection struct {
	// Request is the refused annotation value.
	Request string `json:"request"`
	// Reason is a CamelCase word saying why.
	Reason string `json:"reason"`
	// Message explains the refusal to a person.
	// +optional
	Message string `json:"message,omitempty"`
	// Time is when it was refused.
	Time metav1.Time `json:"time"`
}

// Reclone reasons (status.sites[].recovery.reason,
// status.lastRecloneRejection.reason, the Events' messages).
const (
	// ReasonRecloneWrongPrefix: the prefix is missing, shorter than eight
	// characters, not the start of the site's divergentGtid, or the confirm
	// form names another group or was used for a diverged site.
	ReasonRecloneWrongPrefix = "WrongPrefix"
	// ReasonRecloneActiveSite: the active site is never cloned over.
	ReasonRecloneActiveSite = "ActiveSite"
	// ReasonRecloneNoDonor: no healthy site may donate the clone now.
	ReasonRecloneNoDonor = "NoHealthyDonor"
	// ReasonRecloneLossUncounted: the site was the primary before the last
	// failover, whose loss is not counted yet; its data is the only record
	// of what that failover lost, read before it may be cloned over.
	ReasonRecloneLossUncounted = "LossUncounted"
	// ReasonRecloneNotRunning: a cancel names a site no reclone runs for.
	ReasonRecloneNotRunning = "RecloneNotRunning"
	// ReasonRecloneCancelled: a person cancelled the reclone before its
	// data was touched (<site>:cancel).
	ReasonRecloneCancelled = "Cancelled"
	// ReasonRecloneUnavailable: the operator has no way to run the phases
	// on the site (no reclone executor), so nothing was touched.
	ReasonRecloneUnavailable = "RecloneUnavailable"
	// ReasonPreserveFailed, ReasonCloneFailed: a phase failed on the site.
	ReasonPreserveFailed = "PreserveFailed"
	ReasonCloneFailed    = "CloneFailed"
	// ReasonRecoveryBlocked (condition Degraded): a diverged site waits for
	// a person to ask for its reclone.
	ReasonRecoveryBlocked = "RecoveryBlocked"
)

// Reclone Events.
const (
	// EventRecloneRequested (Normal): a reclone request was accepted.
	EventRecloneRequested = "RecloneRequested"
	// EventRecloneRejected (Warning): a reclone request was refused and removed.
	EventRecloneRejected = "RecloneRejected"
	// EventReclonePhase (Normal): a reclone moved to its next phase.
	EventReclonePhase = "ReclonePhase"
	// EventRecloneRejoined (Normal): the recloned site replicates at the primary's position.
	EventRecloneRejoined = "RecloneRejoined"
	// EventRecloneFailed (Warning): a reclone stopped with a reason.
	EventRecloneFailed = "RecloneFailed"
)
