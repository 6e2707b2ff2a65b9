package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PrimaryUpdateMethod says how the active site gets a new Pod template.
// +kubebuilder:validation:Enum=switchover;restart
type PrimaryUpdateMethod string

const (
	// UpdateSwitchover moves the primary role to a caught-up replica by a
	// planned failover first; the old primary is then updated as a replica.
	UpdateSwitchover PrimaryUpdateMethod = "switchover"
	// UpdateRestart restarts the active site in place: writes stop while it restarts.
	UpdateRestart PrimaryUpdateMethod = "restart"
)

// PrimaryUpdateStrategy says whether the update of the active site waits for a person.
// +kubebuilder:validation:Enum=unsupervised;supervised
type PrimaryUpdateStrategy string

const (
	// UpdateUnsupervised updates the active site as soon as every other site is updated.
	UpdateUnsupervised PrimaryUpdateStrategy = "unsupervised"
	// UpdateSupervised stops before the active site (status.phase
	// WaitingForUser) until a person moves the primary role by a planned failover.
	UpdateSupervised PrimaryUpdateStrategy = "supervised"
)

// UpdatesSpec says how a change of the sites' Pod template is rolled out:
// one site at a time, replicas first, the active site last.
type UpdatesSpec struct {
	// PrimaryUpdateMethod is switchover (a planned failover to the freshest
	// caught-up replica, then the old primary is updated as a replica) or
	// restart (the active site is restarted in place).
	// +kubebuilder:default=switchover
	// +optional
	PrimaryUpdateMethod PrimaryUpdateMethod `json:"primaryUpdateMethod"`

	// PrimaryUpdateStrategy is unsupervised (the update goes on by itself) or
	// supervised (it stops before the active site with status.phase
	// WaitingForUser, and goes on once a person switched the primary over).
	// +kubebuilder:default=unsupervised
	// +optional
	PrimaryUpdateStrategy PrimaryUpdateStrategy `json:"primaryUpdateStrategy"`

	// InPlaceSidecarUpdates lets the operator replace a site's sidecar
	// binary without restarting its Pod: when the sidecar reports another
	// executable hash than the binary the operator ships, the operator
	// streams that binary to the sidecar over the mutual-TLS peer port, and
	// the sidecar checks it, swaps it in and re-executes itself, leaving
	// mysqld running (docs/upgrades.md). Off: a site whose sidecar hash
	// differs is only reported.
	// +optional
	InPlaceSidecarUpdates bool `json:"inPlaceSidecarUpdates,omitempty"`

	// ProgressDeadline is how long the update may go without taking a
	// step (restarting a site, starting its switchover, upgrading a
	// sidecar in place) before it counts as stalled: the condition
	// UpdateStalled turns true with a Warning Event, and planned failovers
	// are no longer refused because of the update. Omitted, 10m. It is
	// never shorter than instance.startDelay plus instance.stopDelay, the
	// time a restart may legitimately take.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') && duration(self) >= duration('10s') && duration(self) <= duration('24h')",message="updates.progressDeadline must be a duration from 10s to 24h, such as 10m"
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
}

// DefaultProgressDeadline is spec.updates.progressDeadline when omitted.
const DefaultProgressDeadline = "10m"

// GroupPhase is what the group as a whole is doing beyond serving:
// empty while nothing is rolled out.
// +kubebuilder:validation:Enum="";Updating;WaitingForUser
type GroupPhase string

const (
	// GroupPhaseNone: no update is in progress.
	GroupPhaseNone GroupPhase = ""
	// GroupPhaseUpdating: the sites' Deployments are being updated one at a time.
	GroupPhaseUpdating GroupPhase = "Updating"
	// GroupPhaseWaitingForUser: every site but the active one is updated
	// and spec.updates.primaryUpdateStrategy is supervised; status.message
	// names the command that continues.
	GroupPhaseWaitingForUser GroupPhase = "WaitingForUser"
)

// PlannedOrigin says who asked for a planned failover.
// +kubebuilder:validation:Enum=annotation;update
type PlannedOrigin string

const (
	// OriginAnnotation: a person set the planned-failover annotation.
	OriginAnnotation PlannedOrigin = "annotation"
	// OriginUpdate: the ordered update switched the stale primary over.
	OriginUpdate PlannedOrigin = "update"
)

// Ordered updates: Events and the planned-failover annotation's refusal.
const (
	// EventSiteUpdated: the ordered update applied a site's new Pod template.
	EventSiteUpdated = "SiteUpdated"
	// EventUpdateSwitchover: the ordered update started a planned failover
	// away from the stale active site.
	EventUpdateSwitchover = "UpdateSwitchover"
	// EventUpdateWaitingForUser: the update stopped before the active site (supervised).
	EventUpdateWaitingForUser = "UpdateWaitingForUser"
	// EventUpdateCompleted: every site that is not skipped runs the new Pod template.
	EventUpdateCompleted = "UpdateCompleted"
	// EventSidecarUpgraded: a site's sidecar took the binary the operator
	// ships and re-executed itself in place.
	EventSidecarUpgraded = "SidecarUpgraded"
	// EventSidecarUpgradeFailed: an in-place upgrade of a site's sidecar
	// was refused or failed; the sidecar keeps its binary.
	EventSidecarUpgradeFailed = "SidecarUpgradeFailed"
	// EventSiteUntainted: a site that is writable again lost the
	// lost-primary taint a failover put on its nodes.
	EventSiteUntainted = "SiteUntainted"
	// EventSidecarBinaryStale (Warning, once per change): a site's sidecar
	// runs another binary than the operator ships and the ordered update
	// does not upgrade it in place; the message names the ways out.
	EventSidecarBinaryStale = "SidecarBinaryStale"
	// EventUpdateStalled (Warning, once per change): the ordered update
	// took no step for longer than spec.updates.progressDeadline.
	EventUpdateStalled = "UpdateStalled"
	// EventSiteDrifted (Warning, once per change): a site's Deployment no
	// longer is what the spec renders although its template hash says it
	// is (someone edited it); the ordered update rolls it back.
	EventSiteDrifted = "SiteDrifted"
	// EventSiteRepaired: a site's Deployment was set back to the rendering
	// without replacing its Pod (only its strategy, revision history or
	// own metadata differed), outside the order and with no switchover.
	EventSiteRepaired = "SiteRepaired"
	// EventSitePodRepaired: the ordered update set the images of a site's
	// Pod, edited on the Pod itself, back to its Deployment's.
	EventSitePodRepaired = "SitePodRepaired"
)

// UpdateSwitchoverStatus counts the switchovers the ordered update started
// that failed in a row, so that it backs off between them and stops after
// MaxUpdateSwitchoverFailures; kept in status so that an operator restart
// neither resets the count nor retries at once.
type UpdateSwitchoverStatus struct {
	// Failures is how many switchovers the update started failed in a row.
	// +kubebuilder:validation:Minimum=0
	Failures int32 `json:"failures"`
	// LastFailureTime is when the last of them ended.
	LastFailureTime metav1.Time `json:"lastFailureTime"`
	// LastFailure is why it failed.
	// +optional
	LastFailure string `json:"lastFailure,omitempty"`
}

// The UpdateStalled condition: true while the ordered update has taken no
// step for longer than its progress deadline (a restarted site that never
// comes back, a switchover that keeps failing, no replica to switch to).
// A stalled update no longer makes planned failovers wait.
const (
	ConditionUpdateStalled = "UpdateStalled"
	// ReasonProgressDeadlineExceeded: the condition is true; the message
	// says what the update waits for and since when.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonSwitchoverRetriesExhausted: the condition is true; the
	// update's switchover failed too often in a row and is not retried:
	// the update waits for a person (status.phase WaitingForUser).
	ReasonSwitchoverRetriesExhausted = "SwitchoverRetriesExhausted"
	// ReasonUpdateProgressing: an update is in progress and took a step
	// within the deadline, or none is in progress.
	ReasonUpdateProgressing = "UpdateProgressing"
)

// The SidecarBinaryStale condition: true while a site's sidecar runs
// another binary than the operator ships and the ordered update does not
// upgrade it in place (spec.updates.inPlaceSidecarUpdates off, or the
// site fenced or diverged). Absent while the operator ships no sidecar
// binary (--sidecar-binary), since it then knows no hash to compare.
const (
	ConditionSidecarBinaryStale = "SidecarBinaryStale"
	// ReasonSidecarBinaryDiffers: the condition is true; the message names
	// the sites and the ways out.
	ReasonSidecarBinaryDiffers = "SidecarBinaryDiffers"
	// ReasonSidecarBinaryCurrent: no reporting sidecar runs another binary,
	// or each one that does is upgraded in place.
	ReasonSidecarBinaryCurrent = "SidecarBinaryCurrent"
)

// AnnotationTemplateHash is set on each site's Deployment: the SHA-256 of
// what the operator rendered for it. A Deployment whose hash differs from
// the current rendering is stale and waits for its turn in the ordered update.
const AnnotationTemplateHash = "bloodraven.shipstream.io/template-hash"

// AnnotationConfigHash is set on each site's Pod template: the SHA-256 of
// its my.cnf, which mysqld reads only when it starts. A change of my.cnf
// therefore makes the site stale like any other change of its template.
const AnnotationConfigHash = "bloodraven.shipstream.io/config-hash"
