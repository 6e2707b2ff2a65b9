package failover

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// semiSyncSpec is a pass's semi-sync view of the fake world's sites a and
// b (and c when added): both candidates, b acknowledging a.
func semiSyncSpec(enabled, required bool) *topology.SemiSyncInput {
	return &topology.SemiSyncInput{Enabled: enabled, Required: required, Timeout: time.Second,
		MinSyncReplicas: 1, MaxSyncReplicas: 2, Sites: []topology.SemiSyncSite{
			{Name: "a", Candidate: true}, {Name: "b", Candidate: true, Acking: true}, {Name: "c", Candidate: true}}}
}

// TestSemiSyncSourceBeforeWritable: every step that makes a site writable
// first makes it the semi-sync source, so its first commit waits for an
// acknowledgement. If that fails, required keeps it read-only and
// preferred makes it writable all the same; both say so in an Event. With
// the spec off nothing is touched.
func TestSemiSyncSourceBeforeWritable(t *testing.T) {
	steps := []struct {
		name string
		run  leaseFenceStep
	}{
		{"emergency promotion", emergencyPromotion},
		{"planned promotion", plannedPromotion},
		{"planned rollback's unfence", plannedRollback},
	}
	errSet := errors.New("SET GLOBAL rpl_semi_sync_master_enabled: Lost connection")
	situations := []struct {
		name     string
		spec     *topology.SemiSyncInput
		err      error
		writable bool
		source   topology.SemiSyncRole // the part the site got; zero: none set
		event    bool
	}{
		{"spec off: nothing is touched", semiSyncSpec(false, true), nil, true, topology.SemiSyncRole{}, false},
		{"required: made the source first, count pinned", semiSyncSpec(true, true), nil, true,
			topology.SemiSyncRole{Source: true, Timeout: topology.SemiSyncMaxTimeout, WaitCount: 1, Promoting: true}, false},
		{"preferred: made the source first", semiSyncSpec(true, false), nil, true,
			topology.SemiSyncRole{Source: true, Timeout: time.Second, WaitCount: 1, Promoting: true}, false},
		{"required and the setting fails: stays read-only", semiSyncSpec(true, true), errSet, false, topology.SemiSyncRole{}, true},
		{"preferred and the setting fails: writable, with a Warning", semiSyncSpec(true, false), errSet, true,
			topology.SemiSyncRole{}, true},
	}
	for _, st := range steps {
		for _, sit := range situations {
			t.Run(st.name+"/"+sit.name, func(t *testing.T) {
				w := newWorld(t)
				w.semiSync, w.semiErr = sit.spec, sit.err
				site, errs := st.run(t, w)
				if sit.err == nil && len(w.unsourced) > 0 {
					t.Fatalf("made writable before it was the semi-sync source: %v", w.unsourced)
				}
				if got := w.sites[site].writable; got != sit.writable {
					t.Fatalf("%s writable %v, want %v (errors %v, events %v)", site, got, sit.writable, errs, w.events)
				}
				got := w.semiRoles[site]
				if want := sit.source; want.Source {
					want.Site = site
					if got != want {
						t.Fatalf("%s's semi-sync part %+v, want %+v", site, got, want)
					}
				} else if got.Source {
					t.Fatalf("%s made the source: %+v", site, got)
				}
				if !sit.spec.Enabled && len(w.semiRoles) > 0 {
					t.Fatalf("spec off, yet semi-sync set: %v", w.semiRoles)
				}
				if ev := slices.Contains(w.events, v1alpha1.EventSemiSyncNotSet); ev != sit.event {
					t.Fatalf("events %v: %s there %v, want %v", w.events, v1alpha1.EventSemiSyncNotSet, ev, sit.event)
				}
				wayOut := slices.ContainsFunc(w.messages, func(m string) bool {
					return strings.Contains(m, "dataDurability: preferred")
				})
				if wantWayOut := sit.err != nil && sit.spec.Required; wayOut != wantWayOut {
					t.Fatalf("messages %q: the way out (dataDurability: preferred) named %v, want %v", w.messages, wayOut, wantWayOut)
				}
				if !sit.writable && st.name != "planned promotion" &&
					!slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, ErrSemiSync) }) {
					t.Fatalf("errors %v: none wraps ErrSemiSync", errs)
				}
			})
		}
	}
}

// TestSemiSyncRepointedReplicaAcknowledges: an emergency failover gives
// the replicas it repoints at the new primary their replica part before
// their replication starts, so that under required the new primary's
// first commits find a replica to acknowledge them without waiting for
// the next pass.
func TestSemiSyncRepointedReplicaAcknowledges(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	w.semiSync = semiSyncSpec(true, true)
	site, errs := emergencyPromotion(t, w)
	if errs[0] != nil || !w.sites[site].writable {
		t.Fatalf("err %v, %s writable %v", errs[0], site, w.sites[site].writable)
	}
	if w.sites["c"].source != "b" {
		t.Fatalf("c replicates from %q, want b", w.sites["c"].source)
	}
	if r := w.semiRoles["c"]; !r.Replica || r.Source {
		t.Fatalf("c's semi-sync part %+v, want a replica's", r)
	}
}

// TestSemiSyncDeadOldPrimaryTakesNoSlot: with one acknowledger slot
// (the default), an emergency failover from a dead a to b gives the slot
// to the healthy c, not to a: under required every commit on b would
// otherwise wait for a.
func TestSemiSyncDeadOldPrimaryTakesNoSlot(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	w.semiSync = semiSyncSpec(true, true)
	w.semiSync.MaxSyncReplicas, w.semiSync.Active = 1, "a"
	w.semiSync.Sites[0].Down = true
	site, errs := emergencyPromotion(t, w)
	if errs[0] != nil || site != "b" || !w.sites[site].writable {
		t.Fatalf("err %v, %s writable %v", errs[0], site, w.sites[site].writable)
	}
	if r := w.semiRoles["c"]; !r.Replica {
		t.Fatalf("c's semi-sync part %+v, want the acknowledger slot", r)
	}
	if r := w.semiRoles["a"]; r.Replica {
		t.Fatalf("the dead a got the acknowledger slot: %+v", r)
	}
}

// TestSemiSyncRollbackTargetAcknowledges: a planned failover rolled back
// gives its target the replica part under the source before the source is
// unfenced, so that the source's first commits find it acknowledging
// (a failed promotion may have made the target the semi-sync source).
func TestSemiSyncRollbackTargetAcknowledges(t *testing.T) {
	w := newWorld(t)
	w.semiSync = semiSyncSpec(true, true)
	w.semiRoles = map[string]topology.SemiSyncRole{"b": {Site: "b", Source: true}} // as a failed promotion left it
	site, errs := plannedRollback(t, w)
	if !w.sites[site].writable {
		t.Fatalf("%s not unfenced (errors %v)", site, errs)
	}
	if r := w.semiRoles["b"]; !r.Replica || r.Source {
		t.Fatalf("b's semi-sync part %+v after the rollback, want a replica's", r)
	}
}
