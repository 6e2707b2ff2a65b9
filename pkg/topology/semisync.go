package topology

import "time"

// SemiSyncMaxTimeout is the longest wait both flavors accept
// (rpl_semi_sync_{source,master}_timeout is an unsigned 32-bit count of
// milliseconds, about 49 days): with required durability a commit waits
// for its acknowledgements rather than fall back to asynchronous
// replication.
const SemiSyncMaxTimeout = 4294967295 * time.Millisecond

// SemiSyncInput is what PlanSemiSync looks at: the group's semi-sync
// settings and where each site stands.
type SemiSyncInput struct {
	Enabled bool
	// Required keeps the acknowledgement count at MinSyncReplicas and
	// commits waiting (dataDurability: required); otherwise the count
	// follows the healthy acknowledging replicas (preferred).
	Required bool
	// Timeout is the group's timeoutMillis, the fallback of preferred.
	Timeout time.Duration
	// MinSyncReplicas is the acknowledgement count the primary asks for;
	// MaxSyncReplicas bounds how many replicas acknowledge. Zero means one.
	MinSyncReplicas, MaxSyncReplicas int
	// OneAck: the flavor waits for one acknowledgement, whatever the count
	// (MariaDB).
	OneAck bool
	// Active is the active site; "" while there is none.
	Active string
	// Sites are every site, in spec order.
	Sites []SemiSyncSite
}

// SemiSyncSite is one site as PlanSemiSync sees it.
type SemiSyncSite struct {
	Name string
	// Candidate: a primary candidate (it acknowledges before other roles).
	Candidate bool
	// Acking: its replica is connected to the active site's semi-sync
	// source and can acknowledge now.
	Acking bool
	// Down: the site cannot acknowledge now, so it takes no acknowledger
	// slot: unreachable or unknown by its debounced state, diverged, or
	// its replication broken. An active site that has stopped answering
	// (the old primary of an emergency failover) is Down.
	Down bool
	// ReceiverDown: its replica receives nothing from its source now (the
	// IO thread stopped, or retrying after an error). It cannot
	// acknowledge the active site, so it takes no slot a connected
	// replica could take: under required, every commit would wait for it.
	// Once another site is made active it is repointed, so its old
	// source's failure no longer counts (SemiSyncRoleWith).
	ReceiverDown bool
	// AdminFenced: an administrator took the site out of service. It
	// still replicates and may acknowledge, but takes a slot only when
	// no other site can (it may be stopped at any moment).
	AdminFenced bool
}

// SemiSyncRole is one site's part in semi-sync replication.
type SemiSyncRole struct {
	Site string
	// Source: commits on this server wait for WaitCount acknowledgements,
	// for at most Timeout.
	Source    bool
	Timeout   time.Duration
	WaitCount int
	// Replica: this server acknowledges what it receives.
	Replica bool
	// Promoting: the role is set right before the site is made writable
	// (pkg/failover PrepareWritable): its replication is stopped first and
	// its IO thread not restarted (pkg/mysql SemiSyncSettings.Promoting).
	// PlanSemiSync never sets it.
	Promoting bool
}

// PlanSemiSync is each site's semi-sync role, in spec order. With
// semi-sync off every role is off. Otherwise the active site is the
// source and up to MaxSyncReplicas other sites acknowledge (ackers). The source asks for MinSyncReplicas acknowledgements:
// required keeps that and waits as long as the server allows; preferred
// asks for no more than the acknowledging replicas there are, never
// below one, within the group's timeout.
func PlanSemiSync(in SemiSyncInput) []SemiSyncRole {
	roles := make([]SemiSyncRole, len(in.Sites))
	for i, s := range in.Sites {
		roles[i].Site = s.Name
	}
	if !in.Enabled || in.Active == "" {
		return roles
	}
	acking := 0
	for i := range ackers(in) {
		roles[i].Replica = true
		if in.Sites[i].Acking {
			acking++
		}
	}
	source := SemiSyncRole{Site: in.Active, Source: true, Timeout: SemiSyncMaxTimeout, WaitCount: waitCount(in)}
	if !in.Required {
		source.Timeout, source.WaitCount = in.Timeout, max(1, min(max(1, in.MinSyncReplicas), acking))
	}
	if in.OneAck {
		source.WaitCount = 1
	}
	for i, s := range in.Sites {
		if s.Name == in.Active {
			roles[i] = source
		}
	}
	return roles
}

// ackers are the indexes of the sites that acknowledge: up to
// MaxSyncReplicas sites other than the active one that can acknowledge
// now (not Down). A slot given to a site that cannot acknowledge would
// make every commit of required wait for it, and preferred fall back to
// asynchronous replication.
//
// Primary candidates come first: a commit only a site that is never
// promoted acknowledged (another role, or fenced by an administrator) is
// lost when the primary is, since the failover promotes a candidate
// without it. Among candidates, and then among the others, the sites
// acknowledging already come first, so that a site keeps its slot while it
// is healthy and the set does not move with every probe; a recovered
// candidate does take a slot back from a site that is never promoted.
// Each tier is in spec order.
//
// Under required, the acknowledgements a commit waits for always include a
// candidate's: fewer than the wait count of the slots go to sites never
// promoted, so none under a flavor that waits for one acknowledgement
// whoever sends it (MariaDB). With no candidate able to acknowledge,
// commits wait: that is what required asks for.
func ackers(in SemiSyncInput) map[int]bool {
	limit := max(1, in.MaxSyncReplicas)
	never := limit // slots for sites never promoted
	if in.Required {
		never = waitCount(in) - 1
	}
	candidate := func(s SemiSyncSite) bool { return s.Candidate && !s.AdminFenced }
	tiers := []func(SemiSyncSite) bool{
		func(s SemiSyncSite) bool { return candidate(s) && s.Acking },
		candidate,
		func(s SemiSyncSite) bool { return s.Acking && !s.AdminFenced },
		func(s SemiSyncSite) bool { return !s.AdminFenced },
		func(SemiSyncSite) bool { return true },
	}
	out, others := map[int]bool{}, 0
	for _, tier := range tiers {
		for i, s := range in.Sites {
			if out[i] || len(out) >= limit || s.Name == in.Active || s.Down || s.ReceiverDown || !tier(s) {
				continue
			}
			if !candidate(s) {
				if others >= never {
					continue
				}
				others++
			}
			out[i] = true
		}
	}
	return out
}

// waitCount is the acknowledgements a required source waits for.
func waitCount(in SemiSyncInput) int {
	if in.OneAck {
		return 1
	}
	return max(1, in.MinSyncReplicas)
}

// SemiSyncRoleWith is site's semi-sync part once active is the active
// site: what a step that makes active writable gives it before its
// barrier lifts, and what a site repointed at active takes before its
// replication starts (pkg/failover PrepareWritable, PrepareReplica). The
// replicas acknowledged the old active site, not active, so when active
// is a new one none counts as acknowledging yet: preferred asks for one
// acknowledgement, and the next pass raises it as they connect. The old
// active site keeps the health in.Sites gives it: Down when it stopped
// answering (an emergency failover), so its slot goes to a site that can
// acknowledge the new primary. A replica's failing receiver (ReceiverDown)
// was failing against the old active site and no longer counts: the site
// is about to be repointed. A site not in in.Sites has every part off.
func SemiSyncRoleWith(in SemiSyncInput, active, site string) SemiSyncRole {
	if active != in.Active {
		sites := make([]SemiSyncSite, len(in.Sites))
		for i, s := range in.Sites {
			s.Acking, s.ReceiverDown = false, false
			sites[i] = s
		}
		in.Active, in.Sites = active, sites
	}
	for _, r := range PlanSemiSync(in) {
		if r.Site == site {
			return r
		}
	}
	return SemiSyncRole{Site: site}
}

// SourceOffSafe reports whether a site whose semi-sync source part is on
// may have it turned off now. Turning it off releases every commit that
// waits for an acknowledgement, and the clients get OK for commits no
// replica holds. So it is turned off only on a site that refuses client
// writes: fenced as this pass read it (fenced), and with no step that
// makes it writable failed or unclear since (maybeWritable). A writable
// site, such as a former primary seen again after a partition, is fenced
// first (Decide), and loses its source part on a later pass.
func SourceOffSafe(fenced, maybeWritable bool) bool {
	return fenced && !maybeWritable
}
