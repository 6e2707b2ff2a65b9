package topology

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ReadReason says why a site is, or is not, in the read Services
// (<group>-replicas, <group>-any and additional ro/r Services).
type ReadReason string

// ReadReason values. Only ReadRoutable routes reads to the site.
const (
	ReadRoutable ReadReason = "Routable"
	// ReadUnreachable: the site's state is unreachable or unknown.
	ReadUnreachable ReadReason = "Unreachable"
	// ReadDROnly: a dr-only site never serves reads.
	ReadDROnly ReadReason = "DROnly"
	// ReadRecovering: a reclone runs for the site, or left its data incomplete.
	ReadRecovering ReadReason = "Recovering"
	// ReadDiverged: the site holds transactions the group's history discarded.
	ReadDiverged ReadReason = "Diverged"
	// ReadFenced: an administrator fenced the site.
	ReadFenced ReadReason = "Fenced"
	// ReadMaybeWritable: an operation that makes the site writable may have
	// taken effect; until that is settled its reads are not the group's.
	ReadMaybeWritable ReadReason = "MaybeWritable"
	// ReadPrimaryNotWritable: the active site is not writable (fenced,
	// drained or not yet promoted): it serves no reads until it is.
	ReadPrimaryNotWritable ReadReason = "PrimaryNotWritable"
	// ReadExtraWriter: a site other than the active one is writable.
	ReadExtraWriter ReadReason = "ExtraWriter"
	// ReadNotReplicating: a replica's threads do not both run, or one of
	// them stopped on an error.
	ReadNotReplicating ReadReason = "NotReplicating"
	// ReadLagging: a replica lags more than spec.replication.maxLagSeconds.
	ReadLagging ReadReason = "Lagging"
)

// ReadRouteInput is what ReadRoutes judges.
type ReadRouteInput struct {
	// Sites are the pass's site views after Judge (spec order).
	Sites []SiteView
	// Active is status.activeSite.
	Active string
	// MaxLag is spec.replication.maxLagSeconds.
	MaxLag time.Duration
	// Recovering names the sites a reclone runs for (any phase before
	// Rejoined or Failed).
	Recovering map[string]bool
}

// ReadRoute is one site's place in the read Services.
type ReadRoute struct {
	Site     string
	Routable bool
	Reason   ReadReason
}

// ReadRoutes decides, per site in Sites order, whether reads may go to it.
// Routable means healthy: the active site while it is writable, and a
// replica while it is read-only, replicating without error and within
// MaxLag. A site is judged on its last observation; a single failed probe
// (SiteView.Stale) does not move it, the debounced state does.
func ReadRoutes(in ReadRouteInput) []ReadRoute {
	out := make([]ReadRoute, 0, len(in.Sites))
	for _, s := range in.Sites {
		r := readReason(in, s)
		out = append(out, ReadRoute{Site: s.Name, Routable: r == ReadRoutable, Reason: r})
	}
	return out
}

// readReason is the first rule a site fails, ReadRoutable when none.
func readReason(in ReadRouteInput, s SiteView) ReadReason {
	switch {
	case s.State != v1alpha1.StateWritable && s.State != v1alpha1.StateReadOnly:
		return ReadUnreachable
	case s.Role == v1alpha1.RoleDROnly:
		return ReadDROnly
	case in.Recovering[s.Name] || s.DataReplaced:
		return ReadRecovering
	case s.Diverged:
		return ReadDiverged
	case s.AdminFenced:
		return ReadFenced
	case s.MaybeWritable && s.Name != in.Active:
		return ReadMaybeWritable
	case s.Name == in.Active:
		if s.State != v1alpha1.StateWritable {
			return ReadPrimaryNotWritable
		}
		return ReadRoutable
	case s.State == v1alpha1.StateWritable:
		return ReadExtraWriter
	}
	rep := s.Replication
	switch {
	case !rep.Running || rep.Error != "" || rep.SQLError:
		return ReadNotReplicating
	case rep.Lag > in.MaxLag:
		return ReadLagging
	}
	return ReadRoutable
}
