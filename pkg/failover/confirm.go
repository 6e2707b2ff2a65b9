package failover

import "time"

// How an old primary was confirmed unable to accept writes; persisted in
// status.failover.fenceConfirmedBy.
const (
	ConfirmedBySQL           = "sql-fence"
	ConfirmedBySidecarReport = "sidecar-report"
	ConfirmedByPodGone       = "pod-gone"
	ConfirmedByLease         = "lease-deadline"
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
}

// PeerAdoption is what the operator knows of another site's sidecar: whether
// Kubernetes shows its Pod gone, and whether (since when) it was served the
// current generation.
type PeerAdoption struct {
	Site    string
	PodGone bool
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
	// FailingSince is when this operator first observed the site's current
	// failure; zero when it is not failing.
	FailingSince time.Time
	// Report is the sidecar's latest report, nil when it sent none to this operator.
	Report *Report
	// LastContact is the last time this operator served the site's sidecar a
	// view (its lease was renewed then), or the operator's start when later.
	LastContact time.Time
	// PodGone is true when Kubernetes shows the site's Pod gone.
	PodGone bool
	// Peers are the other sites' sidecars.
	Peers []PeerAdoption
	// LeaseTimeout and PeerCheckInterval are spec.sidecar's.
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
}

// ConfirmFence applies the design's rule: a site is confirmed unable to accept
// writes when its Pod is gone, when its sidecar reported after the failure was
// first observed that it is fenced or that its mysqld is down, or when its
// lease deadline has passed. It says which, or false.
func ConfirmFence(ev Evidence) (bool, string) {
	if ev.PodGone {
		return true, ConfirmedByPodGone
	}
	if r := ev.Report; r != nil && !ev.FailingSince.IsZero() && !r.At.Before(ev.FailingSince) &&
		(r.Fenced || r.MysqldDown) {
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
// published active site (its sidecar has no reason to fence) or while another
// site's sidecar, whose Pod exists, has not been served the current
// generation: such a peer may still serve the old view and renew the lease.
//
// The last renewal is the operator's last contact with the sidecar, or the
// latest moment a peer was first served the current generation (until then
// the peer could renew the lease), whichever is later.
func LeaseDeadline(ev Evidence) (time.Time, bool) {
	if ev.Site == ev.Active {
		return time.Time{}, false
	}
	base := ev.LastContact
	for _, p := range ev.Peers {
		switch {
		case p.PodGone:
		case !p.Adopted:
			return time.Time{}, false
		case p.At.After(base):
			base = p.At
		}
	}
	return base.Add(ev.LeaseTimeout + ev.PeerCheckInterval), true
}
