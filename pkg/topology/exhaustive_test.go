package topology

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

var allStates = []v1alpha1.SiteState{
	v1alpha1.StateWritable, v1alpha1.StateReadOnly, v1alpha1.StateUnreachable, v1alpha1.StateUnknown,
}

// combo is one case of the exhaustive table: site a is the active site, every
// reachable site holds the same GTID set and replicates without lag.
type combo struct {
	states    []v1alpha1.SiteState // a, b, c
	cooldown  bool                 // the last failover was one minute ago (cooldown five)
	planned   bool                 // the planned-failover guard is on
	confirmed bool                 // every unreachable or unknown site is confirmed fenced
}

func (c combo) name() string {
	parts := make([]string, len(c.states))
	for i, s := range c.states {
		parts[i] = fmt.Sprintf("%c=%s", 'a'+i, s)
	}
	onOff := map[bool]string{true: "on", false: "off"}
	return fmt.Sprintf("%dsites/%s/cooldown=%s/planned=%s/unobserved-fence-confirmed=%s",
		len(c.states), strings.Join(parts, ","), onOff[c.cooldown], onOff[c.planned], onOff[c.confirmed])
}

func (c combo) input() Input {
	sites := make([]SiteView, len(c.states))
	for i, st := range c.states {
		sites[i] = view(string(rune('a'+i)), st, "A:1-10")
		sites[i].FenceConfirmed = c.confirmed
	}
	in := group("a", sites...)
	in.PlannedInFlight = c.planned
	if c.cooldown {
		in = afterFailover(in, "b", "a", time.Minute)
	}
	return in
}

// expect states the decision rules for the combo, one rule per line, in the
// order they apply.
func (c combo) expect() want {
	var writers, extras, unreachable, unknown, readOnly []string
	for i, st := range c.states {
		n := string(rune('a' + i))
		switch {
		case st == v1alpha1.StateWritable:
			writers = append(writers, n)
			if n != "a" {
				extras = append(extras, n)
			}
		case st == v1alpha1.StateUnreachable && n != "a":
			unreachable = append(unreachable, n)
		case st == v1alpha1.StateUnknown && n != "a":
			unknown = append(unknown, n)
		case st == v1alpha1.StateReadOnly && n != "a":
			readOnly = append(readOnly, n)
		}
	}
	// unsafe lists the sites other than target that could still write.
	unsafe := func(target string) []string {
		var out []string
		for i, st := range c.states {
			n := string(rune('a' + i))
			if n != target && st != v1alpha1.StateReadOnly && !c.confirmed {
				out = append(out, n)
			}
		}
		return out
	}
	switch {
	case len(extras) > 0 && len(writers) > 1:
		return want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: extras}
	case len(extras) > 0:
		return want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonStaleWriter, target: "a", fence: extras}
	case len(unreachable) == len(c.states)-1 && c.states[0] == v1alpha1.StateUnreachable:
		return want{kind: KindTotalLoss, reason: v1alpha1.ReasonTotalLoss}
	}
	switch c.states[0] {
	case v1alpha1.StateWritable:
		return c.expectHealth(unreachable, unknown)
	case v1alpha1.StateUnknown:
		return want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}
	case v1alpha1.StateReadOnly:
		return c.expectReassert(unsafe("a"))
	}
	return c.expectFailover(readOnly, unsafe)
}

func (c combo) expectHealth(unreachable, unknown []string) want {
	switch {
	case len(unreachable) > 0:
		return want{kind: KindDegraded, reason: v1alpha1.ReasonPeerDown}
	case len(unknown) > 0:
		return want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}
	}
	return want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}
}

func (c combo) expectReassert(unsafe []string) want {
	switch {
	case c.planned:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, target: "a", wanted: KindNoPrimary}
	case len(unsafe) > 0:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "a", unconfirmed: unsafe, wanted: KindNoPrimary}
	}
	return want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}
}

func (c combo) expectFailover(readOnly []string, unsafe func(string) []string) want {
	switch {
	case c.planned:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, wanted: KindFailover}
	case c.cooldown:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonCooldown, wanted: KindFailover}
	case len(readOnly) == 0:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}
	case len(unsafe(readOnly[0])) > 0:
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: readOnly[0],
			unconfirmed: unsafe(readOnly[0]), wanted: KindFailover}
	}
	return want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: readOnly[0]}
}

// combos lists every state combination for n sites crossed with the cooldown,
// the planned guard and fence confirmation of unobserved sites.
func combos(n int) []combo {
	var out []combo
	total := 1
	for range n {
		total *= len(allStates)
	}
	for i := range total {
		states := make([]v1alpha1.SiteState, n)
		for j, k := 0, i; j < n; j, k = j+1, k/len(allStates) {
			states[j] = allStates[k%len(allStates)]
		}
		for _, flags := range [][3]bool{
			{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false},
			{false, false, true}, {true, false, true}, {false, true, true}, {true, true, true},
		} {
			out = append(out, combo{states: states, cooldown: flags[0], planned: flags[1], confirmed: flags[2]})
		}
	}
	return out
}

func TestDecideExhaustive(t *testing.T) {
	seen := map[Kind]int{}
	for _, n := range []int{2, 3} {
		for _, c := range combos(n) {
			t.Run(c.name(), func(t *testing.T) {
				d := assertDecision(t, c.input(), c.expect())
				seen[d.Kind]++
			})
		}
	}
	// Every kind but SplitBrain (which needs no active site) must be reached.
	for _, k := range []Kind{KindHealthy, KindDegraded, KindFenceExtraWriters, KindFailover,
		KindFailoverBlocked, KindNoPrimary, KindTotalLoss} {
		if seen[k] == 0 {
			t.Errorf("no combination decided %s", k)
		}
	}
	if got, want := len(combos(2))+len(combos(3)), (16+64)*8; got != want {
		t.Errorf("%d combinations, want %d", got, want)
	}
}
