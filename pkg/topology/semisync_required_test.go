package topology

import (
	"testing"
	"time"
)

// TestRequiredAckIncludesACandidate: under dataDurability required an
// acknowledged commit must survive the loss of the primary, and a failover
// promotes only a primary candidate (Eligible; SelectCandidate ignores what
// other roles hold). So the acknowledgements a commit waits for must always
// include one from a candidate: fewer than WaitCount acknowledgers may be
// sites that are never promoted (another role, or fenced by an
// administrator). With MariaDB (one acknowledgement, whoever sends it) no
// such site may acknowledge at all.
//
// PlanSemiSync fills the slots left after the candidates with such sites
// (ackers' tiers 3-5). Their acknowledgement alone then completes a
// commit; when the primary is lost the candidate promoted lacks it.
func TestRequiredAckIncludesACandidate(t *testing.T) {
	sites := func(pdx SemiSyncSite) []SemiSyncSite {
		return []SemiSyncSite{{Name: "iad", Candidate: true}, pdx, {Name: "fra", Acking: true}}
	}
	in := func(minN, maxN int, oneAck bool, ss []SemiSyncSite) SemiSyncInput {
		return SemiSyncInput{Enabled: true, Required: true, Timeout: time.Second, MinSyncReplicas: minN,
			MaxSyncReplicas: maxN, OneAck: oneAck, Active: "iad", Sites: ss}
	}
	for _, tc := range []struct {
		name string
		in   SemiSyncInput
	}{
		{"mariadb, max 2: a dr-only site acknowledges alone", in(1, 2, true, sites(SemiSyncSite{Name: "pdx", Candidate: true, Acking: true}))},
		{"mysql, min 1 max 2: a dr-only site acknowledges alone", in(1, 2, false, sites(SemiSyncSite{Name: "pdx", Candidate: true, Acking: true}))},
		{"the only other candidate restarting: the dr-only site takes the only slot", in(1, 1, false, sites(SemiSyncSite{Name: "pdx", Candidate: true, Down: true}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := map[string]bool{}
			for _, s := range tc.in.Sites {
				cand[s.Name] = s.Candidate && !s.AdminFenced
			}
			wait, never := 0, []string{}
			for _, r := range PlanSemiSync(tc.in) {
				if r.Source {
					wait = r.WaitCount
				}
				if r.Replica && !cand[r.Site] {
					never = append(never, r.Site)
				}
			}
			if len(never) >= wait && len(never) > 0 {
				t.Fatalf("commits wait for %d acknowledgement(s) and %v, never promoted, acknowledge: a commit "+
					"only they hold is acknowledged and lost with the primary", wait, never)
			}
		})
	}
}

// TestAdminFencedTakesASlotLast: docs/durability.md says an
// administrator-fenced site takes a slot only when no other site can. The
// third tier of ackers ("the other sites acknowledging already") does not
// exclude admin-fenced sites, so one that still acknowledges keeps the
// only slot ahead of a healthy dr-only site; when the administrator then
// stops it, commits wait out the timeout (preferred; under required,
// TestRequiredAckIncludesACandidate says no such site acks at all).
func TestAdminFencedTakesASlotLast(t *testing.T) {
	in := SemiSyncInput{Enabled: true, Timeout: time.Second, MinSyncReplicas: 1, MaxSyncReplicas: 1, Active: "iad",
		Sites: []SemiSyncSite{{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, AdminFenced: true, Acking: true},
			{Name: "fra"}}}
	for _, r := range PlanSemiSync(in) {
		if r.Site == "pdx" && r.Replica {
			t.Fatalf("the admin-fenced pdx keeps the only slot while fra can acknowledge: %+v", PlanSemiSync(in))
		}
	}
}
