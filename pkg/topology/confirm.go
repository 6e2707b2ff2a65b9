package topology

import "time"

// How an old primary was confirmed unable to accept writes; persisted in
// status.failover.fenceConfirmedBy.
const (
	ConfirmedBySQL           = "sql-fence"
	ConfirmedBySidecarReport = "sidecar-report"
	ConfirmedByPodGone       = "pod-gone"
	ConfirmedByLease         = "lease-deadline"
	// ConfirmedByProbe says the old primary was observed read-only.
	ConfirmedByProbe = "observed-read-only"
)

// Report is a sidecar's report of its own site, sent as the optional
// parameters of GET /active-site.
type Report struct {
	// At is when the operator received it.
	At time.Time
	// Generation is the topology generation the sidecar held.
	Generation int64
	// Fenced is true when the sidecar saw its mysqld read-only.
	Fenced bool
	// MysqldDown is true when the sidecar could not reach its mysqld.
	MysqldDown bool
	// Boot is the reporting sidecar process's random id, new at every start.
	Boot string
	// ExecutableHash is the SHA-256 (hex) of the reporting sidecar's
	// binary; "" when it did not say.
	ExecutableHash string
	// ViewOperator and ViewSeq echo the last view the sidecar received
	// directly from an operator before the mysqld read this report
	// describes: that operator's process id and the sequence number it
	// stamped on the view. Both are empty when the sidecar had heard no
	// operator before the read, and ViewSeq is zero from a sidecar that
	// predates it (its echo of the view's wall-clock time is never evidence).
	ViewOperator string
	ViewSeq      int64
}

// ObservedAfter reports whether the mysqld read r describes was made after
// the moment of operator's process that mark stands for: mark is the
// sequence number of the first view that process served from then on
// (zero: no failure, never after). When r arrived says nothing about that
// (a slow report describes the read at the start of the sidecar's tick), so
// r must echo a view that operator itself served at or after the mark: the
// sidecar received that view before the read. No clock is compared, not
// even the operator's own, which may step (NTP, a resumed VM).
func (r Report) ObservedAfter(operator string, mark int64) bool {
	return operator != "" && r.ViewOperator == operator && mark > 0 && r.ViewSeq >= mark
}

// PeerAdoption is what the operator knows of another site's sidecar: whether
// Kubernetes shows the site without a Pod, when a Pod of it was last seen
// gone, and whether (since when) the sidecar of its newest Pod was seen, by
// its own report, holding the current generation.
type PeerAdoption struct {
	Site string
	// PodGone is true when Kubernetes shows no Pod of the site and the
	// kubelet of each node its gone Pods ran on has had time to stop their
	// containers (a Pod gone from the API may still run its sidecar).
	PodGone bool
	// GoneAt is, when PodGone, since when this operator knows those
	// kubelets stopped the containers; otherwise the last time it saw a Pod
	// of the site gone. Zero when it never did.
	GoneAt time.Time
	// Adopted is true when the sidecar of the site's newest Pod reported
	// holding the current generation (or a later one); At is when this
	// operator first received such a report from it. A report of an older
	// Pod never counts for a newer one, nor the other way round.
	Adopted bool
	At      time.Time
}

// Evidence is everything the operator knows about whether a site can still
// accept writes. Times are the operator's.
type Evidence struct {
	Site string
	Now  time.Time
	// Active is the published active site.
	Active string
	// Operator is this operator process's id (the Operator of the views it
	// serves): a report counts only when it echoes a view of this process.
	Operator string
	// FailingSince is when this operator first observed the site's current
	// failure; zero when it is not failing.
	FailingSince time.Time
	// FailingSeq stands for the same moment on this operator's view
	// sequence (Report.ObservedAfter): the Seq of the first view it served
	// after it first observed the failure (or, when later, the site's
	// maybe-writable mark); zero when it is not failing.
	FailingSeq int64
	// Report is the sidecar's latest report, nil when it sent none to this operator.
	Report *Report
	// LastContact is the last time this operator served the site's sidecar a
	// view (its lease was renewed then), or the operator's start when later.
	LastContact time.Time
	// PodGone is true when Kubernetes shows the site's Pod gone and the
	// kubelet of the node it ran on is Ready and its heartbeat advanced, since
	// the operator first saw the Pod gone, by the Pod's termination grace
	// period plus one heartbeat interval (a Pod gone from the API is not a
	// process gone: it may have been force-deleted, or its Node object deleted).
	PodGone bool
	// Peers are the other sites' sidecars.
	Peers []PeerAdoption
	// LeaseTimeout and PeerCheckInterval are spec.sidecar's.
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	// LeaseFenceUnproven is true while no arm of the site's mysqld lease
	// fence is known to have succeeded since the operator last claimed the
	// site to make it writable (status.sites[].leaseFenceUnproven).
	LeaseFenceUnproven bool
}

// ConfirmFence applies the design's rule: a site is confirmed unable to accept
// writes when its Pod is gone, when its sidecar reported that it is fenced or
// that its mysqld is down about a state observed after the failure was first
// seen (ObservedAfter), or when its lease deadline has passed. It says which,
// or false.
func ConfirmFence(ev Evidence) (bool, string) {
	if ev.PodGone {
		return true, ConfirmedByPodGone
	}
	if r := ev.Report; r != nil && r.ObservedAfter(ev.Operator, ev.FailingSeq) && (r.Fenced || r.MysqldDown) {
		return true, ConfirmedBySidecarReport
	}
	if deadline, ok := LeaseDeadline(ev); ok && ev.Now.After(deadline) {
		return true, ConfirmedByLease
	}
	return false, ""
}

// LeaseDeadline is when the site's sidecar must have fenced its mysqld on
// lease expiry: its last renewal, plus leaseTimeout, plus peerCheckInterval
// (the sidecar checks once a tick). It is false while the site is the
// published active site (its sidecar has no reason to fence), or while the
// last renewal cannot be bounded yet.
//
// The sidecar renews its lease from the operator and from any peer that
// serves it a view, so its last renewal is the latest of this operator's
// last contact with it and, for every other site, the moment from which that
// site can no longer have served it a view older than the current
// generation (see peerCutoff).
//
// Nor is there one while the site's lease fence is unproven: a step made
// it writable though the arm of its mysqld's lease fence was refused
// under a global read lock (the sidecar's write hold, a backup's), and no
// arm is known to have succeeded since. The sidecar arms the event as it
// lets go of its hold, but if mysqld froze in that very tick the arm
// failed; a sidecar that then pauses never fences, and mysqld thawed
// writable would write on past any deadline.
func LeaseDeadline(ev Evidence) (time.Time, bool) {
	if ev.Site == ev.Active || ev.LeaseFenceUnproven {
		return time.Time{}, false
	}
	base := ev.LastContact
	for _, p := range ev.Peers {
		cut, ok := peerCutoff(p)
		if !ok {
			return time.Time{}, false
		}
		base = later(base, cut)
	}
	return base.Add(ev.LeaseTimeout + ev.PeerCheckInterval), true
}

// peerCutoff is the moment after which peer p can no longer hand the old
// primary's sidecar a view older than the current generation: a sidecar
// that holds the current generation serves a view naming another site, and
// a sidecar whose Pod is gone serves nothing.
//   - The sidecar of its newest Pod was seen holding the current generation:
//     from then on. The operator says so (Adopted) only while the site
//     lists at most one Pod and every Pod of it that went away is proven
//     stopped by its kubelet, and from the later of the two: a replaced Pod
//     may still run (force-deleted, or on a partitioned node) and relay the
//     old view.
//   - Its Pod went away without having been seen holding the current
//     generation: from when its kubelet was known to have stopped the
//     containers (none while that is unknown).
//   - Otherwise there is none: a live sidecar that was not seen holding the
//     current generation may keep renewing the old primary's lease, for
//     instance on an island with it that the operator cannot reach.
func peerCutoff(p PeerAdoption) (time.Time, bool) {
	switch {
	case p.Adopted:
		return p.At, true
	case p.PodGone && !p.GoneAt.IsZero():
		return p.GoneAt, true
	}
	return time.Time{}, false
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
