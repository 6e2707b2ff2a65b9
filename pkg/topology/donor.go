package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Donor is the site a clone is taken from (CloneDonor).
type Donor struct {
	Site string
	// Primary is true when the donor is the active site: the backup then
	// loads the writer, which CloneDonor avoids when a replica can donate.
	Primary bool
}

// CloneDonor picks the site that seeds target by physical clone: the first
// caught-up replica in spec order when there is one, and the writing active
// site only when there is none. A donor must be observed now (not stale),
// read-only or, for the active site, writable; never diverged, fenced by an
// administrator, possibly writable after a failed operation, down or
// unknown; and a replica must replicate without error, within MaxLag, and
// hold nothing the active site lacks. There is no donor while a failover,
// emergency or planned, owns the topology, nor for the active site itself:
// ErrNoDonor and ErrCloneActive, with every site's reason in the message.
func CloneDonor(in Input, target string) (Donor, error) {
	if err := in.Validate(); err != nil {
		return Donor{}, err
	}
	if _, ok := in.Site(target); !ok {
		return Donor{}, fmt.Errorf("clone target %q: %w", target, ErrUnknownSite)
	}
	switch {
	case target == in.ActiveSite:
		return Donor{}, fmt.Errorf("%w: %s is the active site", ErrCloneActive, target)
	case in.ActiveSite == "":
		return Donor{}, fmt.Errorf("%w: no active site recorded", ErrNoDonor)
	case in.InFlight != nil:
		return Donor{}, fmt.Errorf("%w: failover %s->%s in flight", ErrNoDonor, in.InFlight.From, in.InFlight.To)
	case in.PlannedInFlight:
		return Donor{}, fmt.Errorf("%w: planned failover in flight", ErrNoDonor)
	}
	return pickDonor(in, target)
}

// pickDonor is the first fit replica other than target, else the active
// site (CloneDonor's rules).
func pickDonor(in Input, target string) (Donor, error) {
	active, _ := in.Site(in.ActiveSite)
	diverged := map[string]bool{}
	if active.State == v1alpha1.StateWritable {
		for _, d := range divergence(in, active) {
			diverged[d.Site] = true
		}
	}
	var why []string
	for _, s := range in.Sites {
		if s.Name == target || s.Name == active.Name {
			continue
		}
		reason := replicaUnfit(in, s, active, diverged[s.Name])
		if reason == "" {
			return Donor{Site: s.Name}, nil
		}
		why = append(why, s.Name+": "+reason)
	}
	reason := primaryUnfit(active)
	if reason == "" {
		return Donor{Site: active.Name, Primary: true}, nil
	}
	why = append(why, active.Name+" (active): "+reason)
	slices.Sort(why)
	return Donor{}, fmt.Errorf("%w: %s", ErrNoDonor, strings.Join(why, "; "))
}

// unfit is why a site may donate nothing whatever its part, "" when none.
func unfit(s SiteView) string {
	switch {
	case s.Diverged:
		return "diverged"
	case s.AdminFenced:
		return "fenced by an administrator"
	case s.MaybeWritable:
		return "may be writable after a failed operation"
	case !s.reachable():
		return "not reachable (" + string(s.State) + ")"
	case s.Stale:
		return "not observed by the latest probe"
	}
	return ""
}

// replicaUnfit is why replica s may not donate, "" when it may.
func replicaUnfit(in Input, s, active SiteView, diverged bool) string {
	if r := unfit(s); r != "" {
		return r
	}
	switch {
	case diverged:
		return "holds transactions " + active.Name + " lacks"
	case s.State != v1alpha1.StateReadOnly:
		return "writable"
	case !s.Replication.Running || s.Replication.Error != "" || s.Replication.SQLError:
		return "not replicating"
	case s.Replication.Lag > in.MaxLag:
		return fmt.Sprintf("lagging %s", s.Replication.Lag)
	case active.State != v1alpha1.StateWritable:
		return "no writing active site to be caught up with"
	}
	return ""
}

// primaryUnfit is why the active site may not donate, "" when it may.
func primaryUnfit(a SiteView) string {
	if r := unfit(a); r != "" {
		return r
	}
	if a.State != v1alpha1.StateWritable {
		return "not writing"
	}
	return ""
}

// DonorUnfit says why donor may not seed target now, "" when it may: the
// rules CloneDonor applies, for one recorded donor. A reclone's donor is
// chosen when the request is accepted; it is asked again right before the
// site's data is replaced, since the donor may have gone away meanwhile.
func DonorUnfit(in Input, target, donor string) string {
	s, ok := in.Site(donor)
	switch {
	case !ok:
		return fmt.Sprintf("%q is not a site of the group", donor)
	case donor == target:
		return "it is the clone's target"
	case in.InFlight != nil || in.PlannedInFlight:
		return "a failover owns the topology"
	}
	active, _ := in.Site(in.ActiveSite)
	if donor == in.ActiveSite {
		return primaryUnfit(active)
	}
	diverged := false
	if active.State == v1alpha1.StateWritable {
		for _, d := range divergence(in, active) {
			diverged = diverged || d.Site == donor
		}
	}
	return replicaUnfit(in, s, active, diverged)
}
