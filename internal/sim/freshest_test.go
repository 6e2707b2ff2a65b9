package sim

import (
	"slices"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestCheckFreshest shows the freshest-promoted invariant sees a site made
// writable without what an eligible site holds, and only then.
func TestCheckFreshest(t *testing.T) {
	cases := []struct {
		name string
		// other is what site b (index 1) holds; promoted is site c's (index 2).
		other, promoted txs
		since           int // b observable from this step on
		pausedUntil     int // the leading operator process is paused until this step
		want            bool
	}{
		{"promoted lacks the old primary's transactions an eligible site has", txs{5, 0, 0}, txs{3, 0, 0}, 0, 0, true},
		{"promoted holds everything", txs{5, 0, 0}, txs{5, 0, 0}, 0, 0, false},
		{"the eligible site's own writes are its divergence, not freshness", txs{5, 2, 0}, txs{5, 0, 0}, 0, 0, false},
		{"a site readable too briefly to be healthy does not count", txs{5, 0, 0}, txs{3, 0, 0}, 18, 0, false},
		// Seed 26673: the operator, paused, probed nothing while the site
		// came back, so its debouncer still held the site unreachable.
		{"a site readable only while the operator was paused does not count", txs{5, 0, 0}, txs{3, 0, 0}, 0, 18, false},
		{"a site readable long enough after the operator resumed counts", txs{5, 0, 0}, txs{3, 0, 0}, 0, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ConfigForSeed(1, 100)
			cfg.Roles = []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate}
			w := newWorld(cfg.withDefaults(), nil)
			b, s := w.sites[1], w.sites[2]
			w.op.(*realOperator).pauseLeader(c.pausedUntil)
			b.db.executed, s.db.executed = c.other.clone(), c.promoted.clone()
			for w.step = 0; w.step < 20; w.step++ {
				w.check.noteHistory()
				if w.step < c.since {
					w.check.hist[1].observableSince = -1
				}
			}
			w.check.checkFreshest(s)
			got := slices.ContainsFunc(w.check.violations, func(v Violation) bool { return v.Invariant == InvariantFreshest })
			if got != c.want {
				t.Fatalf("violation %v, want %v: %v", got, c.want, w.check.violations)
			}
		})
	}
}
