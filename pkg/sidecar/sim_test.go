package sidecar_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/sim"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// twin runs the real Loop (through the sim's RealSidecar) and the sim's own
// model of the rule side by side on every tick, acts on the real one, and
// records every tick where they disagree.
type twin struct {
	site        string
	real, model sim.SidecarLoop
	diffs       *[]string
}

func (w *twin) Tick(now time.Time, op *sim.View, peers []sim.View, writable bool) (bool, string) {
	rf, rr := w.real.Tick(now, op, peers, writable)
	mf, mr := w.model.Tick(now, op, peers, writable)
	rv, mv := w.real.View(), w.model.View()
	// The real loop is stricter in one known way: its boot safety net.
	boot := rf && rr == sidecar.ReasonBoot && !mf
	if (rf != mf || rr != mr) && !boot || rv.Active != mv.Active || rv.Generation != mv.Generation || !rv.ObservedAt.Equal(mv.ObservedAt) {
		*w.diffs = append(*w.diffs, fmt.Sprintf("%s at %s: real fence=%v %q view %s/%d, model fence=%v %q view %s/%d",
			w.site, now.Format(time.TimeOnly), rf, rr, rv.Active, rv.Generation, mf, mr, mv.Active, mv.Generation))
	}
	return rf, rr
}

func (w *twin) View() sim.View { return w.real.View() }

func (w *twin) Relay() sim.View { return w.real.Relay() }

// The real Loop makes the same decisions as the simulation's model of the
// design's rule over hundreds of seeded runs of faults, and breaks no
// invariant while it acts.
func TestLoopAgreesWithTheSimulationModel(t *testing.T) {
	var diffs []string
	adjust := func(c *sim.Config) {
		sim.UseRealCode(c)
		c.Sidecar = func(s sim.SidecarSettings, now time.Time) sim.SidecarLoop {
			return &twin{site: s.Site, real: sim.RealSidecar(s, now), model: sim.NewLeaseSidecar(s, now), diffs: &diffs}
		}
	}
	sum, err := sim.RunSeeds(1, 300, sim.DefaultSteps, adjust)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	for i, d := range diffs {
		if i == 10 {
			t.Errorf("... and %d more", len(diffs)-10)
			break
		}
		t.Errorf("disagreement: %s", d)
	}
	st := sum.Stats
	if st.SidecarFences[sidecar.ReasonView] == 0 || st.SidecarFences[sidecar.ReasonLease] == 0 {
		t.Errorf("the runs exercised too little: %s", sum.StatsLine())
	}
	t.Log(sum.StatsLine())
}
