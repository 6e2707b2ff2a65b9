package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// MariaDB: server 1 (site x) wrote 1-167; its tail 120-167 was lost by a
// failover to server 2 (site y), replicated only to r (which the operator
// never saw since). y wrote 120-153. x was recloned from y (state
// 0-1-119,0-2-153), promoted by a planned failover, wrote 154-200; then an
// emergency failover to z (server 3), promoted holding 0-2-153,0-1-200,
// wrote 201-210. r comes back holding the lost 0-1-120..167.
func TestMariaDBReusedNamesHideLostTail(t *testing.T) {
	z := mariaView("z", v1alpha1.StateWritable, "0-2-153,0-1-200,0-3-210")
	z.ServerID = "0-3"
	x := mariaView("x", v1alpha1.StateReadOnly, "0-2-153,0-1-200,0-3-210")
	x.ServerID = "0-1"
	y := mariaView("y", v1alpha1.StateReadOnly, "0-2-153,0-1-200,0-3-210")
	y.ServerID = "0-2"
	r := mariaView("r", v1alpha1.StateReadOnly, "0-1-167")
	r.ServerID = "0-4"
	in := group("z", x, y, z, r)
	in.History = []FailoverRecord{
		{From: "x", To: "y", Generation: 1, Time: t0.Add(-3 * time.Hour), Kind: v1alpha1.KindEmergency, Lost: gtid.MustParseSet("0-1:120-167")},
		{From: "y", To: "x", Generation: 2, Time: t0.Add(-2 * time.Hour), Kind: v1alpha1.KindPlanned},
		{From: "x", To: "z", Generation: 3, Time: t0.Add(-time.Hour), Kind: v1alpha1.KindEmergency},
	}
	in.Promoted, in.PromotedKnown = maria("0-2-153,0-1-200"), true
	j := Judge(in)
	rv, _ := j.Site("r")
	d, _ := Decide(in)
	t.Logf("r diverged=%v errant=%v divergent=%v decision=%s/%s followers=%v",
		rv.Diverged, d.Errant, d.Divergent, d.Kind, d.Reason, Followers(j, "z", in.Promoted))
	if !rv.Diverged {
		t.Errorf("r holds the lost 0-1:120-167 (the history's 120-153 are server 2's) but is not diverged")
	}
}

// As above, but x (recloned, promoted at seq 153) wrote 154-160 and went
// down; y replicated all of it; r still holds x's lost 120-167.
func TestMariaDBReusedNamesPromoteLostTail(t *testing.T) {
	x := sid(confirmed(down("x")), "0-1")
	y := mariaView("y", v1alpha1.StateReadOnly, "0-2-153,0-1-160")
	y.ServerID = "0-2"
	r := mariaView("r", v1alpha1.StateReadOnly, "0-1-167")
	r.ServerID = "0-4"
	in := group("x", x, y, r)
	in.History = []FailoverRecord{
		{From: "x", To: "y", Generation: 1, Time: t0.Add(-3 * time.Hour), Kind: v1alpha1.KindEmergency, Lost: gtid.MustParseSet("0-1:120-167")},
		{From: "y", To: "x", Generation: 2, Time: t0.Add(-2 * time.Hour), Kind: v1alpha1.KindPlanned},
	}
	in.Promoted, in.PromotedKnown = maria("0-1-119,0-2-153"), true
	d, _ := Decide(in)
	t.Logf("decision %s/%s target=%s errant=%v divergent=%v", d.Kind, d.Reason, d.Target, d.Errant, d.Divergent)
	if d.Kind == KindFailover && d.Target == "r" {
		t.Errorf("r, holding the discarded 0-1:120-167 and lacking the history's 120-160, is promoted")
	}
}

// MySQL: an earlier failover b -> a lost B:51-60, which r still holds. An
// emergency a -> b is in flight, b's promotion answer was lost (b
// maybe-writable, down) and the failover moved on to c. b must not count
// as a writer of the history then: r, holding the discarded B:51-60, is
// diverged and never the target.
func TestMaybeWritableSiteDoesNotExcuseALostTail(t *testing.T) {
	b := sid(confirmed(with(down("b"), func(v *SiteView) { v.MaybeWritable = true })), uuidB)
	in := promotedAt(afterFailover(group("c",
		sid(confirmed(down("a")), uuidA), b, sid(ro("c", "A:1-50,B:1-50"), uuidC),
		sid(ro("r", "A:1-50,B:1-60"), "dddddddd-0000-0000-0000-000000000004")),
		"b", "a", time.Hour), "A:1-50,B:1-50")
	in.History[len(in.History)-1].Lost = gtid.MustParseSet(uuidB + ":51-60")
	in.InFlight = &Intent{From: "a", To: "c", Generation: in.Generation, Step: v1alpha1.StepPromoting}
	d, _ := Decide(in)
	if d.Target == "r" {
		t.Fatalf("r, holding the discarded B:51-60, is the target: %s/%s errant %v", d.Kind, d.Reason, d.Errant)
	}
}
