package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRolloutFailingInPlaceUpgradeStalls: pdx's sidecar refuses (or
// fails) every in-place upgrade, so its hash never changes and it is never
// Busy. Each pass plans RolloutUpgradeInPlace again; such a step must not
// restart the stall clock, or the update would be Updating and never
// Stalled, refusing every planned failover for ever.
func TestRolloutFailingInPlaceUpgradeStalls(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	site := func(name string, st v1alpha1.SiteState) RolloutSite {
		return RolloutSite{View: SiteView{Name: name, State: st, Replication: Replication{Running: st == v1alpha1.StateReadOnly}},
			Exists: true, PodReady: true, SidecarHash: "old"}
	}
	progress := time.Time{}
	phase := v1alpha1.GroupPhaseNone
	var step RolloutStep
	for now := start; now.Before(start.Add(2 * time.Hour)); now = now.Add(30 * time.Second) {
		iad, pdx := site("iad", v1alpha1.StateWritable), site("pdx", v1alpha1.StateReadOnly)
		iad.SidecarHash = "new"
		iad.SidecarAskedAt, pdx.SidecarAskedAt = now.Add(-time.Second), now.Add(-time.Second)
		in := RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Decision: KindHealthy,
			Sites: []RolloutSite{iad, pdx}, SidecarHash: "new", InPlace: true, Phase: phase, ProgressAt: progress,
			ProgressDeadline: 10 * time.Minute, MaxLag: 30 * time.Second, PeerCheckInterval: 2 * time.Second, Now: now}
		step = PlanRollout(in)
		phase, progress = step.Phase, step.ProgressAt
	}
	if step.Phase != v1alpha1.GroupPhaseUpdating || !step.Stalled {
		t.Fatalf("after 2h of failing in-place upgrades: action %s phase %s stalled %v (%s)",
			step.Action, step.Phase, step.Stalled, step.Message)
	}
}
