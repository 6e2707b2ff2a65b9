package sim

import (
	"slices"
	"testing"
)

// firstViolation runs seeds 1..limit with adjust applied and returns the
// first run that broke the invariant.
func firstViolation(t *testing.T, limit int, invariant string, adjust func(*Config)) (Result, bool) {
	t.Helper()
	for seed := uint64(1); seed <= uint64(limit); seed++ {
		cfg := ConfigForSeed(seed, DefaultSteps)
		adjust(&cfg)
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(r.Violations, func(v Violation) bool { return v.Invariant == invariant }) {
			return r, true
		}
	}
	return Result{}, false
}

// Each broken rule must make some seed break the invariant it protects: this
// proves the checker (and the faults) can see the failure, so that a clean
// run means something.
func TestCheckerCatchesBrokenRules(t *testing.T) {
	cases := []struct {
		name      string
		invariant string
		limit     int
		adjust    func(*Config)
	}{
		{"sidecar without lease self-fence gives two writers", InvariantOneWriter, 200,
			func(c *Config) { c.Sidecar = NewSidecarWithoutLease }},
		{"lease deadline from the operator's last contact only gives two writers", InvariantOneWriter, 1000,
			func(c *Config) { c.Confirmer = NaiveConfirmer{} }},
		{"planned failover without the lag wait loses acknowledged writes", InvariantPlannedLoss, 1000,
			func(c *Config) { c.Break = BreakPlannedLagWait }},
		{"repointing without the errant check rejoins diverged sites", InvariantNoRejoin, 200,
			func(c *Config) { c.Break = BreakRejoinCheck }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, found := firstViolation(t, c.limit, c.invariant, c.adjust)
			if !found {
				t.Fatalf("no seed in 1..%d broke %s", c.limit, c.invariant)
			}
			t.Logf("seed %d broke %s: %s", r.Config.Seed, c.invariant, r.Violations[0])
		})
	}
}

// A seed replays exactly: same trace twice, and the same trace again when the
// printed schedule is parsed back and given explicitly.
func TestSimReplayIsExact(t *testing.T) {
	for _, seed := range []uint64{3, 51, 1234} {
		a, err := Run(ConfigForSeed(seed, DefaultSteps))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Run(ConfigForSeed(seed, DefaultSteps))
		cfg := ConfigForSeed(seed, DefaultSteps)
		if cfg.Schedule, err = ParseSchedule(a.Schedule.String()); err != nil {
			t.Fatal(err)
		}
		c, _ := Run(cfg)
		if !slices.Equal(a.Trace, b.Trace) || !slices.Equal(a.Trace, c.Trace) {
			t.Fatalf("seed %d: traces differ between replays", seed)
		}
		if len(a.Trace) < 10 {
			t.Fatalf("seed %d: suspiciously short trace (%d lines)", seed, len(a.Trace))
		}
	}
}

// The default runs must exercise what they claim to check.
func TestSimExercisesTheFaults(t *testing.T) {
	sum, err := RunSeeds(1, 300, DefaultSteps, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := sum.Stats
	checks := []struct {
		name string
		n    int
	}{
		{"emergency failovers", st.Emergency},
		{"planned failovers", st.Planned},
		{"failed planned failovers", st.PlannedFailed},
		{"re-assertions", st.Reasserts},
		{"diverged sites", st.DivergedSites},
		{"sidecar fences by lease", st.SidecarFences[FenceByLease]},
		{"sidecar fences by view", st.SidecarFences[FenceByView]},
		{"fences confirmed by lease deadline", st.FenceConfirmedBy[ConfirmedByLease]},
		{"fences confirmed by SQL", st.FenceConfirmedBy[ConfirmedBySQL]},
		{"fences confirmed by a fenced/down report", st.FenceConfirmedBy[ConfirmedByProbe]},
		{"fences confirmed by Pod gone", st.FenceConfirmedBy[ConfirmedByPodGone]},
	}
	for _, c := range checks {
		if c.n == 0 {
			t.Errorf("300 seeds produced no %s", c.name)
		}
	}
	t.Log(sum.StatsLine())
}
