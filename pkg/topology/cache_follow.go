package topology

// Between failovers the caches follow the MySQL active site: its cache is
// the master and carries the traffic label, every other site's cache
// replicates from it. PlanCacheFollow says what to change. It is what
// moves the cache after an emergency failover too: the MySQL promotion is
// done by the time a healthy pass plans this, so the cache never delays it.

// CacheSiteRead is one site's cache as read this pass.
type CacheSiteRead struct {
	Site string
	// Read is false when the cache did not answer.
	Read bool
	// Master is its role; MasterSite, on a replica, the site its master
	// endpoint names ("" when it names none of the group's).
	Master     bool
	MasterSite string
}

// CacheFollowPlan is what PlanCacheFollow decided.
type CacheFollowPlan struct {
	// Promote is set when the active site's cache is a replica: it must
	// take over (EmergencyCachePlan's budget), then fall back. PromoteFrom
	// is the site it replicates from, the takeover's source ("" unknown):
	// a live old master hands over every session it acknowledged.
	Promote     bool
	PromoteFrom string
	// Repoint lists the sites whose cache must REPLICAOF the active one's.
	Repoint []string
	// Traffic is the site whose cache should carry the traffic label: the
	// active site once its cache is master, "" to leave the label alone.
	Traffic string
}

// PlanCacheFollow plans one pass. Nothing is planned without an active
// site or while its cache does not answer (nothing may replicate from an
// unknown master, and the label stays where it is). A planned failover in
// flight owns the caches: the caller does not plan then.
func PlanCacheFollow(active string, reads []CacheSiteRead) CacheFollowPlan {
	var plan CacheFollowPlan
	var act *CacheSiteRead
	for i := range reads {
		if reads[i].Site == active {
			act = &reads[i]
		}
	}
	if active == "" || act == nil || !act.Read {
		return plan
	}
	if !act.Master {
		plan.Promote, plan.PromoteFrom = true, act.MasterSite
		return plan // the others follow once it is master
	}
	plan.Traffic = active
	for _, r := range reads {
		if r.Site != active && r.Read && (r.Master || r.MasterSite != active) {
			plan.Repoint = append(plan.Repoint, r.Site)
		}
	}
	return plan
}
