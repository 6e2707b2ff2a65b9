package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestHistoryWritersInFlightSource: a planned failover b -> c failed after
// its fence and named c active (no failover record names c); c was
// re-asserted and wrote C:1-5, which a and b replicated. c then went
// down, and an emergency failover c -> a is in flight. c's writes are the
// group's history, not errant: a and b are not diverged, and a is still
// the target (found by the simulation with the real operator, seed 149
// of the MariaDB runs: every candidate was marked divergent, and the group
// was left without a primary).
func TestHistoryWritersInFlightSource(t *testing.T) {
	in := promotedAt(afterFailover(group("a",
		sid(ro("a", "A:1-10,C:1-5"), uuidA), sid(ro("b", "A:1-10,C:1-5"), uuidB), sid(confirmed(down("c")), uuidC)),
		"a", "b", time.Hour), "A:1-10")
	in.InFlight = &Intent{From: "c", To: "a", Generation: in.Generation, Step: v1alpha1.StepFencing}
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errant) > 0 {
		t.Fatalf("the in-flight failover's source's writes judged errant: %v (%s)", d.Errant, d.Message)
	}
	if d.Target != "a" {
		t.Fatalf("target %q, want a: %s %s", d.Target, d.Kind, d.Message)
	}
}

// TestHistoryWritersMaybeWritableTarget: the in-flight failover's target
// iad was promoted, the answer was lost, and it is marked maybe-writable;
// it wrote A:51, which fra replicated. Until the failover completes or is
// abandoned, iad's writes may be the history: fra is not judged on them
// (a divergence mark is for good). Found by the simulation with the real
// operator, seed 4100, truthful-divergence.
func TestHistoryWritersMaybeWritableTarget(t *testing.T) {
	iad := sid(with(down("iad"), func(v *SiteView) { v.MaybeWritable = true }), uuidA)
	in := promotedAt(afterFailover(group("iad",
		iad, sid(confirmed(down("pdx")), uuidB), sid(ro("fra", "A:1-51,B:1-5"), uuidC)),
		"iad", "pdx", time.Hour), "A:1-50")
	in.InFlight = &Intent{From: "pdx", To: "iad", Generation: in.Generation, Step: v1alpha1.StepPromoting}
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errant) > 0 {
		t.Fatalf("replicated writes of a maybe-writable target judged errant: %v (%s)", d.Errant, d.Message)
	}
}
