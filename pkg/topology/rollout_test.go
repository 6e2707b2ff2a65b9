package topology

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestPlanRollout(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	// back is a site that is up, Ready and caught up; the active site iad writes.
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	stale := func(s RolloutSite) RolloutSite { s.Stale = true; return s }
	down := func(s RolloutSite) RolloutSite {
		s.PodReady = false
		s.View.State = v1alpha1.StateUnreachable
		return s
	}
	lag := func(s RolloutSite, d time.Duration) RolloutSite { s.View.Replication.Lag = d; return s }
	fenced := func(s RolloutSite) RolloutSite { s.View.AdminFenced = true; return s }
	diverged := func(s RolloutSite) RolloutSite { s.View.Diverged = true; return s }
	drOnly := func(s RolloutSite) RolloutSite { s.View.Role = v1alpha1.RoleDROnly; return s }
	// silent is a site whose sidecar has not asked this operator for the
	// view (or may be another Pod's, one that went away and is not proven
	// stopped): it may not be made writable yet (SidecarAsking).
	silent := func(s RolloutSite) RolloutSite { s.SidecarAskedAt = time.Time{}; return s }
	askedAgo := func(s RolloutSite, d time.Duration) RolloutSite { s.SidecarAskedAt = now.Add(-d); return s }
	in := func(sites ...RolloutSite) RolloutInput {
		return RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Sites: sites, Decision: KindHealthy,
			MaxLag: 30 * time.Second, PeerCheckInterval: 2 * time.Second, Now: now}
	}
	with := func(i RolloutInput, f func(*RolloutInput)) RolloutInput { f(&i); return i }
	// Executable hashes: the operator ships "new"; oldBin runs another binary.
	oldBin := func(s RolloutSite) RolloutSite { s.SidecarHash = "old"; return s }
	newBin := func(s RolloutSite) RolloutSite { s.SidecarHash = "new"; return s }
	busy := func(s RolloutSite) RolloutSite { s.UpgradeBusy = true; return s }
	inPlace := func(i RolloutInput) RolloutInput { i.SidecarHash, i.InPlace = "new", true; return i }
	noInPlace := func(i RolloutInput) RolloutInput { i.SidecarHash = "new"; return i }
	tests := []struct {
		name    string
		in      RolloutInput
		action  RolloutAction
		site    string
		target  string
		phase   v1alpha1.GroupPhase
		message string // a part of the message
	}{
		{"nothing stale: idle", in(back("iad"), back("pdx")), RolloutIdle, "", "", "", ""},
		{"nothing stale, update was in progress, a site not back: wait for it",
			with(in(back("iad"), down(back("pdx"))), func(i *RolloutInput) { i.Phase = v1alpha1.GroupPhaseUpdating }),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx"},
		{"nothing stale, not in progress, a site down: idle (not an update)",
			in(back("iad"), down(back("pdx"))), RolloutIdle, "", "", "", ""},
		{"replicas first, in spec order", in(stale(back("iad")), stale(back("pdx")), stale(back("fra"))),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, "updating pdx (3 of 3 left)"},
		{"the previous site not back yet: wait", in(stale(back("iad")), down(back("pdx")), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx to be Ready"},
		{"the previous site back but lagging: wait", in(stale(back("iad")), lag(back("pdx"), time.Minute), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx"},
		{"the previous site's Pod ready but replication not running: wait",
			in(stale(back("iad")), func() RolloutSite { s := back("pdx"); s.View.Replication.Running = false; return s }(), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx"},
		{"the previous site's probe is stale: wait",
			in(stale(back("iad")), func() RolloutSite { s := back("pdx"); s.View.Stale = true; return s }(), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx"},
		{"a stale replica already down goes first", in(stale(back("iad")), stale(back("pdx")), stale(down(back("fra")))),
			RolloutUpdate, "fra", "", v1alpha1.GroupPhaseUpdating, "updating fra"},
		{"two stale replicas down: one at a time", in(back("iad"), stale(down(back("pdx"))), stale(down(back("fra")))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for fra"},
		{"an emergency failover in flight: wait, in the update's phase",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) {
				i.EmergencyInFlight, i.Phase = true, v1alpha1.GroupPhaseUpdating
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "emergency failover"},
		{"a planned failover asked before the update began: the update does not begin",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) { i.PlannedRequested = true }),
			RolloutWait, "", "", v1alpha1.GroupPhaseNone, "planned failover"},
		{"supervised, the person's planned failover runs: still WaitingForUser (not refused)",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.PlannedRequested, i.Strategy, i.Phase = true, v1alpha1.UpdateSupervised, v1alpha1.GroupPhaseWaitingForUser
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseWaitingForUser, "planned failover"},
		{"the active site changed in this pass: wait",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) {
				i.AuthorityMoved, i.Phase = true, v1alpha1.GroupPhaseUpdating
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "the active site changed"},
		{"the group needs a failover: wait",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) {
				i.Decision, i.Phase = KindFailover, v1alpha1.GroupPhaseUpdating
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "the group is Failover"},
		{"degraded (a peer lagging) still moves", with(in(stale(back("iad")), stale(back("pdx"))),
			func(i *RolloutInput) { i.Decision = KindDegraded }), RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, ""},
		{"only the primary stale: switch over to the caught-up replica", in(stale(back("iad")), back("pdx")),
			RolloutSwitchover, "iad", "pdx", v1alpha1.GroupPhaseUpdating, "switching the primary iad over to pdx"},
		{"switchover target: the least lag", in(stale(back("iad")), lag(back("pdx"), 5*time.Second), lag(back("fra"), time.Second)),
			RolloutSwitchover, "iad", "fra", v1alpha1.GroupPhaseUpdating, ""},
		{"switchover target: never dr-only", in(stale(back("iad")), drOnly(back("pdx")), lag(back("fra"), 3*time.Second)),
			RolloutSwitchover, "iad", "fra", v1alpha1.GroupPhaseUpdating, ""},
		{"no candidate: wait", in(stale(back("iad")), drOnly(back("pdx"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "no updated, caught-up primary-candidate"},
		{"the primary never restarts while a replica is down", in(stale(back("iad")), down(back("pdx")), back("fra")),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "before the primary iad"},
		{"restart method: the primary in place, last",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) { i.Method = v1alpha1.UpdateRestart }),
			RolloutUpdate, "iad", "", v1alpha1.GroupPhaseUpdating, "restarting the primary iad in place"},
		{"restart method: replicas still first",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) { i.Method = v1alpha1.UpdateRestart }),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, ""},
		{"supervised: replicas by themselves",
			with(in(stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) { i.Strategy = v1alpha1.UpdateSupervised }),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, ""},
		{"supervised: stops before the primary, naming the command",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) { i.Strategy = v1alpha1.UpdateSupervised }),
			RolloutWaitForUser, "iad", "pdx", v1alpha1.GroupPhaseWaitingForUser,
			"kubectl annotate mfg orders -n shop bloodraven.shipstream.io/planned-failover=pdx --overwrite"},
		{"supervised, the user switched over: the old primary updated as a replica",
			with(in(back("iad"), stale(back("pdx"))), func(i *RolloutInput) {
				i.Strategy, i.Phase = v1alpha1.UpdateSupervised, v1alpha1.GroupPhaseWaitingForUser
			}),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, "updating pdx (1 of 2 left)"},
		{"cooldown running: the switchover waits",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) { i.CooldownEnds = now.Add(time.Minute) }),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "cooldown ends"},
		{"cooldown over: switch over",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) { i.CooldownEnds = now.Add(-time.Second) }),
			RolloutSwitchover, "iad", "pdx", v1alpha1.GroupPhaseUpdating, ""},
		{"the update's switchover failed just now: wait before retrying",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Switchover = SwitchoverFailures{Count: 1, LastAt: now.Add(-10 * time.Second), Last: "LagTimeout"}
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "failed (LagTimeout; 1 of 5 in a row)"},
		{"a reclone runs: the primary's switchover waits for it",
			with(in(stale(back("iad")), back("pdx"), fenced(back("fra"))), func(i *RolloutInput) {
				i.Recloning, i.Phase = "fra", v1alpha1.GroupPhaseUpdating
			}),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "the reclone of fra runs"},
		{"a reclone runs: a stale replica (maybe its donor) is not restarted, and no update begins",
			with(in(back("iad"), stale(back("pdx")), fenced(down(back("fra")))), func(i *RolloutInput) { i.Recloning = "fra" }),
			RolloutWait, "", "", "", "the reclone of fra runs"},
		{"the update's switchover failed long ago: retry",
			with(in(stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Switchover = SwitchoverFailures{Count: 1, LastAt: now.Add(-2 * SwitchoverRetry)}
			}),
			RolloutSwitchover, "iad", "pdx", v1alpha1.GroupPhaseUpdating, ""},
		{"fenced site skipped, named, and not waited for", in(stale(back("iad")), stale(fenced(down(back("pdx")))), stale(back("fra"))),
			RolloutUpdate, "fra", "", v1alpha1.GroupPhaseUpdating, "not updated (fenced or diverged): pdx"},
		{"a site whose reclone saves its data (not held) is skipped, and the update waits for the reclone",
			with(in(back("iad"), stale(back("pdx")), stale(back("fra"))), func(i *RolloutInput) { i.Recloning = "pdx" }),
			RolloutWait, "", "", "", "not updated (fenced or diverged): pdx"},
		{"diverged site skipped", in(back("iad"), stale(diverged(back("pdx"))), stale(back("fra"))),
			RolloutUpdate, "fra", "", v1alpha1.GroupPhaseUpdating, "not updated (fenced or diverged): pdx"},
		{"only skipped sites stale: idle, and named", in(back("iad"), stale(fenced(back("pdx")))), RolloutIdle, "", "", "",
			"not updated (fenced or diverged): pdx"},
		{"a skipped site is never the switchover target", in(stale(back("iad")), fenced(back("pdx"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "no updated"},
		{"a stale replica is never the switchover target", in(stale(back("iad")), stale(back("pdx"))),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, ""},
		{"the previous replica is up but its sidecar silent (its old Pod not proven stopped): the next one waits",
			in(stale(back("iad")), silent(back("pdx")), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx's sidecar to ask the operator for the view"},
		{"the switchover waits until the target's sidecar asks: the promotion would be held back after the fence",
			in(stale(back("iad")), silent(back("pdx"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "pdx's sidecar"},
		{"a target whose sidecar last asked more than two peerCheckIntervals ago is not taken",
			in(stale(back("iad")), askedAgo(back("pdx"), 5*time.Second)),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "pdx's sidecar"},
		{"a replica whose sidecar is silent holds the primary back, though another could take it",
			in(stale(back("iad")), silent(back("pdx")), askedAgo(back("fra"), 3*time.Second)),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "pdx's sidecar"},
		{"the target's sidecar asked within two peerCheckIntervals: switch over",
			in(stale(back("iad")), askedAgo(back("pdx"), 3*time.Second)),
			RolloutSwitchover, "iad", "pdx", v1alpha1.GroupPhaseUpdating, ""},
		{"the active site's sidecar is not waited for (it is writable already)",
			in(silent(stale(back("iad"))), stale(back("pdx"))),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, ""},
		{"in place: a replica's stale binary first", inPlace(in(oldBin(back("iad")), oldBin(back("pdx")))),
			RolloutUpgradeInPlace, "pdx", "", v1alpha1.GroupPhaseUpdating, "upgrading the sidecar of pdx in place (2 of 2 left)"},
		{"in place: the primary's sidecar needs no switchover", inPlace(in(oldBin(back("iad")), newBin(back("pdx")))),
			RolloutUpgradeInPlace, "iad", "", v1alpha1.GroupPhaseUpdating, "upgrading the sidecar of iad in place (1 of 2 left)"},
		{"in place: one at a time while an upgrade is busy", inPlace(in(oldBin(back("iad")), busy(oldBin(back("pdx"))))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "upgrading the sidecar of pdx in place"},
		{"in place: waits for a site that is not back", inPlace(in(oldBin(back("iad")), newBin(down(back("pdx"))))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx to be Ready and caught up before upgrading the sidecar of iad"},
		{"in place: every binary current: idle", inPlace(in(newBin(back("iad")), newBin(back("pdx")))),
			RolloutIdle, "", "", "", ""},
		{"in place: an unknown hash is not stale", inPlace(in(back("iad"), back("pdx"))),
			RolloutIdle, "", "", "", ""},
		{"in place: nothing known of the shipped binary, nothing stale",
			with(in(oldBin(back("iad")), oldBin(back("pdx"))), func(i *RolloutInput) { i.InPlace = true }),
			RolloutIdle, "", "", "", ""},
		{"in place: a stale Deployment is restarted, not upgraded in place",
			inPlace(in(oldBin(back("iad")), stale(oldBin(back("pdx"))))),
			RolloutUpgradeInPlace, "iad", "", v1alpha1.GroupPhaseUpdating, ""},
		{"in place: then the stale Deployment", inPlace(in(newBin(back("iad")), stale(oldBin(back("pdx"))))),
			RolloutUpdate, "pdx", "", v1alpha1.GroupPhaseUpdating, "updating pdx"},
		{"in place: an emergency failover holds it",
			with(inPlace(in(oldBin(back("iad")), back("pdx"))), func(i *RolloutInput) { i.EmergencyInFlight = true }),
			RolloutWait, "", "", v1alpha1.GroupPhaseNone, "emergency failover"},
		{"in place: a fenced site is skipped and named", inPlace(in(newBin(back("iad")), fenced(oldBin(back("pdx"))))),
			RolloutIdle, "", "", "", "not updated (fenced or diverged): pdx"},
		{"no in place: a stale binary is only named", noInPlace(in(oldBin(back("iad")), newBin(back("pdx")))),
			RolloutIdle, "", "", "", "sidecar binary differs from the operator's: iad"},
		{"no in place: a stale binary never restarts the primary", noInPlace(in(oldBin(back("iad")), oldBin(back("pdx")))),
			RolloutIdle, "", "", "", "iad, pdx"},
		{"a site without a Deployment yet is not back", in(stale(back("iad")), func() RolloutSite { s := back("pdx"); s.Exists = false; return s }(), stale(back("fra"))),
			RolloutWait, "", "", v1alpha1.GroupPhaseUpdating, "waiting for pdx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanRollout(tt.in)
			if got.Action != tt.action || got.Site != tt.site || (tt.target != "" && got.Target != tt.target) || got.Phase != tt.phase {
				t.Fatalf("got %+v, want %s site %q target %q phase %q", got, tt.action, tt.site, tt.target, tt.phase)
			}
			if !strings.Contains(got.Message, tt.message) {
				t.Errorf("message %q, want it to contain %q", got.Message, tt.message)
			}
		})
	}
}

// Whatever the sites look like, PlanRollout never restarts the active site
// under switchover, never restarts a site while another site it may
// update is not back, and never switches over to a site whose sidecar is
// silent (the promotion would be held back after the fence).
func TestPlanRolloutNeverTakesTwoDown(t *testing.T) {
	names := []string{"iad", "pdx", "fra"}
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	const bits = 4
	for mask := 0; mask < 1<<(bits*len(names)); mask++ {
		var sites []RolloutSite
		for i, n := range names {
			v := SiteView{Name: n, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
			if n == "iad" {
				v.State = v1alpha1.StateWritable
			}
			bit := func(b int) bool { return mask&(1<<(bits*i+b)) != 0 }
			s := RolloutSite{View: v, Exists: true, PodReady: !bit(0), Stale: bit(1)}
			if bit(2) {
				s.View.Replication.Running = false
			}
			if !bit(3) {
				s.SidecarAskedAt = now.Add(-time.Second)
			}
			sites = append(sites, s)
		}
		for _, m := range []v1alpha1.PrimaryUpdateMethod{v1alpha1.UpdateSwitchover, v1alpha1.UpdateRestart} {
			in := RolloutInput{ActiveSite: "iad", Sites: sites, Decision: KindHealthy, Method: m,
				PeerCheckInterval: 2 * time.Second, Now: now}
			got := PlanRollout(in)
			if got.Action == RolloutSwitchover {
				for _, s := range sites {
					if s.View.Name == got.Target && s.SidecarAskedAt.IsZero() {
						t.Fatalf("mask %b: switches over to %s, whose sidecar is silent: %+v", mask, got.Target, got)
					}
				}
			}
			if got.Action != RolloutUpdate {
				continue
			}
			if got.Site == "iad" && m == v1alpha1.UpdateSwitchover {
				t.Fatalf("mask %b: restarts the active site under switchover: %+v", mask, got)
			}
			var notBack []string
			for _, s := range sites {
				if s.View.Name != got.Site && !siteBack(in, s) {
					notBack = append(notBack, s.View.Name)
				}
			}
			if len(notBack) > 0 && !slices.Contains(notBack, got.Site) {
				t.Fatalf("mask %b: updates %s while %v are not back", mask, got.Site, notBack)
			}
		}
	}
}

// TestPlanRolloutBinaryStale: a sidecar that runs another binary than the
// operator ships, where the update does not upgrade it in place, is named
// in BinaryStale with a message that names the ways out, for the group's
// SidecarBinaryStale condition and Event. The update restarts nothing for
// it (the same image would come back) and does not enter Updating, so it
// never holds planned failovers back.
func TestPlanRolloutBinaryStale(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	site := func(name, hash string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v.State = v1alpha1.StateWritable
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second), SidecarHash: hash}
	}
	fenced := func(s RolloutSite) RolloutSite { s.View.AdminFenced = true; return s }
	in := func(inPlace bool, sites ...RolloutSite) RolloutInput {
		return RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Sites: sites, Decision: KindHealthy,
			PeerCheckInterval: 2 * time.Second, Now: now, SidecarHash: "new", InPlace: inPlace}
	}
	tests := []struct {
		name    string
		in      RolloutInput
		action  RolloutAction
		stale   []string
		message []string // parts of BinaryMessage
	}{
		{"every binary current", in(false, site("iad", "new"), site("pdx", "new")), RolloutIdle, nil, nil},
		{"a hash not reported yet is not stale", in(false, site("iad", ""), site("pdx", "new")), RolloutIdle, nil, nil},
		{"no in place: the primary's binary named, nothing restarted", in(false, site("iad", "old"), site("pdx", "new")),
			RolloutIdle, []string{"iad"}, []string{"sidecar of iad runs another binary", "spec.updates.inPlaceSidecarUpdates",
				"spec.sidecar.image", "restarting"}},
		{"no in place: every site named", in(false, site("iad", "old"), site("pdx", "old")),
			RolloutIdle, []string{"iad", "pdx"}, []string{"sidecars of iad, pdx run another binary"}},
		{"no in place: a fenced site's binary named too", in(false, site("iad", "new"), fenced(site("pdx", "old"))),
			RolloutIdle, []string{"pdx"}, []string{"pdx"}},
		{"in place: upgraded, not reported", in(true, site("iad", "new"), site("pdx", "old")),
			RolloutUpgradeInPlace, nil, nil},
		{"in place: a fenced site is not upgraded, so reported", in(true, site("iad", "new"), fenced(site("pdx", "old"))),
			RolloutIdle, []string{"pdx"}, []string{"fenced or diverged"}},
		{"nothing known of the shipped binary: nothing reported",
			func() RolloutInput { i := in(false, site("iad", "old")); i.SidecarHash = ""; return i }(), RolloutIdle, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanRollout(tt.in)
			if got.Action != tt.action || !slices.Equal(got.BinaryStale, tt.stale) {
				t.Fatalf("got %+v, want %s with binary stale %v", got, tt.action, tt.stale)
			}
			if tt.action == RolloutIdle && got.Phase != v1alpha1.GroupPhaseNone {
				t.Fatalf("phase %q: a stale binary alone must not begin an update", got.Phase)
			}
			if len(tt.stale) == 0 && got.BinaryMessage != "" {
				t.Fatalf("binary message %q with nothing stale", got.BinaryMessage)
			}
			for _, m := range tt.message {
				if !strings.Contains(got.BinaryMessage, m) {
					t.Errorf("binary message %q, want it to contain %q", got.BinaryMessage, m)
				}
			}
		})
	}
}
