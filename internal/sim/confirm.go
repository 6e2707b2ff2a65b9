package sim

import "time"

// PeerAdoption is what the operator knows of one other site's sidecar: whether
// Kubernetes shows its Pod gone, and whether (and since when, at the latest) it
// holds the current generation.
type PeerAdoption struct {
	Site    string
	PodGone bool
	GoneAt  time.Time // when Kubernetes showed the Pod gone
	Adopted bool
	At      time.Time
}

// Evidence is everything the operator knows about whether a site it once made
// writable still can write. Times are the operator's observation times.
type Evidence struct {
	Site       string
	Now        time.Time
	Active     string // the published active site
	Generation int64  // the published generation
	// UnfencedAt is when the operator last made the site writable (persisted).
	UnfencedAt time.Time
	// ObservedSafeAt is the last time a fresh probe saw the site read-only, or
	// its sidecar reported its mysqld down; zero if never in this operator's life.
	ObservedSafeAt time.Time
	// FailingSince is the first failed probe of the site's current run of
	// failures; zero while its probes succeed.
	FailingSince time.Time
	// LastContact is the operator's last exchange with the site's sidecar, or
	// the operator's start when later (what happened before is unknown).
	LastContact time.Time
	PodGone     bool
	Peers       []PeerAdoption
	// LeaseTimeout and PeerCheckInterval are spec.sidecar's.
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
}

// FenceConfirmer decides whether a site that may be writable is confirmed
// unable to accept writes, and says by what. pkg/failover's rule plugs in here.
type FenceConfirmer interface {
	Confirm(ev Evidence) (ok bool, by string)
}

// Confirmation sources.
const (
	ConfirmedByPodGone = "pod-gone"
	ConfirmedByProbe   = "observed-fenced" // read-only probe or sidecar report of fenced/down
	ConfirmedByLease   = "lease-deadline"
	ConfirmedBySQL     = "sql-fence"
)

// DesignConfirmer is the design's rule, with "last contact" made precise for
// sidecars that renew their lease through peers:
//
// The old primary's sidecar keeps renewing its lease from any peer that still
// serves the old view. A peer stops doing so once it holds the current
// generation (whose view names another site: then it makes the old primary
// fence instead). So the old primary's last renewal is at the latest the
// operator's last contact with it, or the moment the last other site was seen
// holding the current generation. The lease deadline is that, plus
// leaseTimeout, plus peerCheckInterval (the sidecar only checks once a tick).
// A peer whose Pod is gone renews nothing any more, but it may have until it
// went away: it counts with the time Kubernetes showed it gone (or its
// adoption, when earlier). While any other site whose Pod exists has not been
// seen holding the current generation, there is no deadline: it might be an
// island with the old primary.
type DesignConfirmer struct{}

// Confirm implements FenceConfirmer.
func (DesignConfirmer) Confirm(ev Evidence) (bool, string) {
	if ok, by := observedFenced(ev); ok {
		return ok, by
	}
	if ev.Active == ev.Site {
		return false, ""
	}
	base := ev.LastContact
	for _, p := range ev.Peers {
		last := p.At // the peer served the old view until then at the latest
		switch {
		case p.PodGone && (!p.Adopted || p.GoneAt.Before(p.At)):
			last = p.GoneAt // ... or until its Pod went away
		case !p.Adopted:
			return false, ""
		}
		if last.After(base) {
			base = last
		}
	}
	return leaseOver(ev, base)
}

// NaiveConfirmer reads the design's lease deadline literally: last contact
// with the operator, plus leaseTimeout, plus peerCheckInterval. It ignores
// renewals through peers. Tests use it to show the simulation finds the gap.
type NaiveConfirmer struct{}

// Confirm implements FenceConfirmer.
func (NaiveConfirmer) Confirm(ev Evidence) (bool, string) {
	if ok, by := observedFenced(ev); ok {
		return ok, by
	}
	if ev.Active == ev.Site {
		return false, ""
	}
	return leaseOver(ev, ev.LastContact)
}

func observedFenced(ev Evidence) (bool, string) {
	if ev.PodGone {
		return true, ConfirmedByPodGone
	}
	if ev.ObservedSafeAt.After(ev.UnfencedAt) {
		return true, ConfirmedByProbe
	}
	return false, ""
}

func leaseOver(ev Evidence, base time.Time) (bool, string) {
	if ev.Now.After(base.Add(ev.LeaseTimeout + ev.PeerCheckInterval)) {
		return true, ConfirmedByLease
	}
	return false, ""
}
