package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
	"github.com/shipstream/bloodraven/pkg/topology"
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

// The breakages below live in the simulation, not in the product: a
// sidecar or a mysqld that misbehaves in a way the product relies on it
// not to. The operator, the sidecar's Loop and the failover code are the
// real ones.

// sidecarWithoutLease is the real sidecar Loop believing its lease lasts
// for days: it never fences by lease, neither on its ticks, nor on waking,
// nor through mysqld's lease fence event.
func sidecarWithoutLease(c *sidecar.Config) { c.LeaseTimeout = 100 * 24 * time.Hour }

// brokenServer wraps every mysqld the operator opens in one run; what it
// breaks is up to its fields. fenced remembers, across the run's
// connections, the sites whose fence it swallowed.
type brokenServer struct {
	mysql.Instance
	fenced map[string]bool
	// fenceIgnored: the fence answers success and changes nothing, and
	// the server reads back read-only until it is made writable: its
	// clients write on.
	fenceIgnored bool
	// relayAsExecuted: gtid_executed counts what the IO thread fetched
	// and the SQL thread has not applied, and WaitForGTID agrees; a
	// promotion then drops the relay log.
	relayAsExecuted bool
	// hidesErrant: gtid_executed leaves out what only this server holds.
	hidesErrant bool
}

func breakServer(c *Config, b brokenServer) {
	fenced := map[string]bool{}
	c.Instance = func(i mysql.Instance) mysql.Instance {
		b := b
		b.Instance, b.fenced = i, fenced
		return b
	}
}

func (b brokenServer) Fence(ctx context.Context) error {
	if !b.fenceIgnored {
		return b.Instance.Fence(ctx)
	}
	_, err := b.Instance.Status(ctx)
	if err == nil {
		b.fenced[b.Addr()] = true
	}
	return err
}

func (b brokenServer) Unfence(ctx context.Context) error {
	delete(b.fenced, b.Addr())
	return b.Instance.Unfence(ctx)
}

func (b brokenServer) Promote(ctx context.Context, opts mysql.PromoteOptions) (mysql.Promotion, error) {
	delete(b.fenced, b.Addr())
	return b.Instance.Promote(ctx, opts)
}

func (b brokenServer) Status(ctx context.Context) (mysql.Status, error) {
	st, err := b.Instance.Status(ctx)
	if err != nil {
		return st, err
	}
	if b.fenced[b.Addr()] {
		st.ReadOnly, st.SuperReadOnly = true, true
	}
	if b.hidesErrant {
		si := b.Instance.(simInstance)
		others := gtid.Set{}
		for _, o := range si.w.sites {
			if o.name != si.name {
				others = others.Union(o.db.executed.set(si.w.uuids))
			}
		}
		st.Executed = st.Executed.Intersect(others)
		st.GTIDExecuted = st.Executed.String()
	}
	if b.relayAsExecuted {
		st.Executed = st.Executed.Union(b.fetched())
		st.GTIDExecuted = st.Executed.String()
	}
	return st, nil
}

// fetched is what the server's IO thread fetched, applied or not.
func (b brokenServer) fetched() gtid.Set {
	si := b.Instance.(simInstance)
	s, _ := si.w.siteByName(si.name)
	got := s.db.executed.clone()
	got.raise(s.db.received)
	return got.set(si.w.uuids)
}

func (b brokenServer) WaitForGTID(ctx context.Context, set gtid.Set, d time.Duration) error {
	err := b.Instance.WaitForGTID(ctx, set, d)
	if b.relayAsExecuted && errors.Is(err, mysql.ErrTimeout) && b.fetched().Contains(set) {
		return nil
	}
	return err
}

// withPlannedUnderLag adds to c's schedule, every two minutes, a planned
// failover to iad or pdx in turn while its SQL thread stalls: planned
// failovers are rare in the drawn schedules, and a lagging target rarer
// still.
func withPlannedUnderLag(c *Config) {
	s := scheduleFor(*c)
	for at := 60; at < c.Steps-60; at += 120 {
		site := at / 120 % 2
		s = append(s, Fault{At: at, Kind: FaultSlowReplica, Site: site, Dur: 40}, Fault{At: at + 5, Kind: FaultPlanned, Site: site})
	}
	slices.SortStableFunc(s, func(a, b Fault) int { return a.At - b.At })
	c.Schedule = s
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
		{"sidecar without lease self-fence gives two writers", InvariantOneWriter, 40,
			func(c *Config) { c.Sidecar = sidecarWithoutLease }},
		{"a fence that holds no client back gives two writers", InvariantOneWriter, 40,
			func(c *Config) { withPlannedUnderLag(c); breakServer(c, brokenServer{fenceIgnored: true}) }},
		{"a target that counts its relay log as applied loses planned writes", InvariantPlannedLoss, 40,
			func(c *Config) { withPlannedUnderLag(c); breakServer(c, brokenServer{relayAsExecuted: true}) }},
		{"a server that hides its errant transactions rejoins diverged", InvariantNoRejoin, 40,
			func(c *Config) { breakServer(c, brokenServer{hidesErrant: true}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, found := firstViolation(t, c.limit, c.invariant, c.adjust)
			if !found {
				t.Fatalf("no seed in 1..%d broke %s", c.limit, c.invariant)
			}
			i := slices.IndexFunc(r.Violations, func(v Violation) bool { return v.Invariant == c.invariant })
			t.Logf("seed %d broke %s: %s", r.Config.Seed, c.invariant, r.Violations[i])
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
		{"sidecar fences by lease", st.SidecarFences[sidecar.ReasonLease]},
		{"sidecar fences by view", st.SidecarFences[sidecar.ReasonView]},
		{"sidecar fences escalated to stopping mysqld", st.SidecarFences[sidecar.ReasonView+"-stop"] + st.SidecarFences[sidecar.ReasonLease+"-stop"]},
		{"sidecar boot fences", st.SidecarFences[sidecar.ReasonBoot]},
		{"lease fence events fired", st.SidecarFences["lease-event"]},
		{"fences confirmed by lease deadline", st.FenceConfirmedBy[topology.ConfirmedByLease]},
		{"fences confirmed by SQL", st.FenceConfirmedBy[topology.ConfirmedBySQL]},
		{"fences confirmed by a read-only probe", st.FenceConfirmedBy[topology.ConfirmedByProbe]},
		{"fences confirmed by a sidecar's report", st.FenceConfirmedBy[topology.ConfirmedBySidecarReport]},
		{"fences confirmed by Pod gone", st.FenceConfirmedBy[topology.ConfirmedByPodGone]},
	}
	for _, c := range checks {
		if c.n == 0 {
			t.Errorf("300 seeds produced no %s", c.name)
		}
	}
	t.Log(sum.StatsLine())
}
