package topology

import (
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

const (
	uuidA = "aaaaaaaa-0000-0000-0000-000000000001"
	uuidB = "bbbbbbbb-0000-0000-0000-000000000002"
	uuidC = "cccccccc-0000-0000-0000-000000000003"
)

// set parses a GTID set written with the short names A, B and C for the uuids.
func set(s string) gtid.Set {
	r := []rune{}
	for _, c := range s {
		switch c {
		case 'A':
			r = append(r, []rune(uuidA)...)
		case 'B':
			r = append(r, []rune(uuidB)...)
		case 'C':
			r = append(r, []rune(uuidC)...)
		default:
			r = append(r, c)
		}
	}
	return gtid.MustParseSet(string(r))
}

func view(name string, st v1alpha1.SiteState, executed string) SiteView {
	return SiteView{Name: name, Role: v1alpha1.RolePrimaryCandidate, State: st, Executed: set(executed),
		Replication: Replication{Running: st == v1alpha1.StateReadOnly}}
}

// Short site constructors: writable, read-only (replicating, no lag), unreachable, unknown.
func wr(name, executed string) SiteView { return view(name, v1alpha1.StateWritable, executed) }
func ro(name, executed string) SiteView { return view(name, v1alpha1.StateReadOnly, executed) }
func down(name string) SiteView         { return view(name, v1alpha1.StateUnreachable, "") }
func unk(name string) SiteView          { return view(name, v1alpha1.StateUnknown, "") }

func with(s SiteView, f func(*SiteView)) SiteView { f(&s); return s }

func confirmed(s SiteView) SiteView {
	return with(s, func(v *SiteView) { v.FenceConfirmed = true })
}

func group(active string, sites ...SiteView) Input {
	return Input{Sites: sites, ActiveSite: active, Generation: 3, Cooldown: 5 * time.Minute,
		MaxLag: 10 * time.Second, Now: t0}
}

func afterFailover(in Input, from, to string, ago time.Duration) Input {
	in.History = append(in.History, FailoverRecord{From: from, To: to, Generation: in.Generation,
		Time: in.Now.Add(-ago), Kind: v1alpha1.KindEmergency})
	return in
}

// want is the part of a Decision a table case asserts.
type want struct {
	kind        Kind
	reason      string
	target      string
	fence       []string
	unconfirmed []string
	divergent   []string // sites named in Divergent
	wanted      Kind
	errant      []string // sites named in Errant
}

func assertDecision(t *testing.T, in Input, w want) Decision {
	t.Helper()
	d, err := Decide(in)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	var div, errant []string
	for _, dv := range d.Divergent {
		div = append(div, dv.Site)
	}
	for _, dv := range d.Errant {
		errant = append(errant, dv.Site)
	}
	if d.Kind != w.kind || d.Reason != w.reason || d.Target != w.target || d.Wanted != w.wanted ||
		!slices.Equal(d.Fence, w.fence) || !slices.Equal(d.Unconfirmed, w.unconfirmed) || !slices.Equal(div, w.divergent) ||
		!slices.Equal(errant, w.errant) {
		t.Fatalf("got  %s\nwant %s/%s target=%s fence=%v unconfirmed=%v divergent=%v wanted=%s errant=%v\n(%s)",
			d, w.kind, w.reason, w.target, w.fence, w.unconfirmed, w.divergent, w.wanted, w.errant, d.Message)
	}
	assertOneWriter(t, in, d)
	return d
}

// assertOneWriter applies d to in and checks that at most one site can write
// afterwards: fenced sites become read-only, the site d makes writable becomes
// writable, and a site that is unreachable or unknown and not confirmed fenced
// counts as possibly writable whenever some site is made writable.
func assertOneWriter(t *testing.T, in Input, d Decision) {
	t.Helper()
	target, promotes := d.MakesWritable()
	writers := 0
	for _, s := range in.Sites {
		switch {
		case slices.Contains(d.Fence, s.Name):
		case promotes && s.Name == target:
			writers++
		case s.State == v1alpha1.StateWritable:
			writers++
		case s.MaybeWritable && (s.reachable() || !s.FenceConfirmed):
			writers++ // a promotion of it may have taken effect
		case promotes && !s.reachable() && !s.FenceConfirmed:
			writers++
		}
	}
	if writers > 1 {
		t.Fatalf("decision %s leaves %d possible writers", d, writers)
	}
	if promotes && slices.ContainsFunc(in.Sites, func(s SiteView) bool {
		return s.Name == target && (s.AdminFenced || s.Diverged || s.State != v1alpha1.StateReadOnly)
	}) {
		t.Fatalf("decision %s makes an ineligible site writable", d)
	}
	if promotes {
		assertNoSilentLoss(t, in, d, target)
	}
}

// assertNoSilentLoss checks the GTID side of a decision that makes target
// writable (issue 13's audit): the target holds no transaction outside the
// authority's history and has a fully applied relay log if its SQL thread
// failed; a re-asserted site holds every transaction of its own source id
// that another site not known diverged holds (all of them when its id is
// unknown); a promoted site holds every eligible site's transactions.
func assertNoSilentLoss(t *testing.T, in Input, d Decision, target string) {
	t.Helper()
	judged, _ := judgeHistory(in, d.Active)
	tv, _ := judged.Site(target)
	if tv.Diverged || relayUnapplied(tv) != "" {
		t.Fatalf("decision %s makes %s writable, which holds history the group discarded or cannot apply its relay log", d, target)
	}
	for _, o := range judged.Sites {
		if o.Name == target || o.Diverged {
			continue
		}
		want := o.Executed
		switch {
		case d.Kind == KindNoPrimary && tv.ServerID != "":
			want = want.Only(tv.ServerID)
		case d.Kind == KindFailover && !Eligible(o):
			continue
		}
		if miss := gtid.Lacks(tv.Executed, want); !miss.IsEmpty() {
			t.Fatalf("decision %s makes %s writable without %s that %s holds", d, target, miss, o.Name)
		}
	}
}
