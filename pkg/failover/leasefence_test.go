package failover

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// leaseFenceStep is one step that makes a site writable, run on w until
// it has made the site writable or given up; it returns that site and the
// errors the passes returned.
type leaseFenceStep func(t *testing.T, w *world) (site string, errs []error)

func emergencyPromotion(t *testing.T, w *world) (string, []error) {
	primarySeenDownButSQLAnswers(w)
	_, err := run(t, w, NewEmergency(w.env()))
	return "b", []error{err}
}

// plannedRun runs a planned failover on a pworld around w's settings.
func plannedRun(t *testing.T, w *world, request string, lagging bool) []error {
	pw := newPWorld(t)
	pw.world = w
	pw.m = NewPlanned(pw.penv())
	pw.lagging["b"] = lagging
	pw.annotate(request)
	var errs []error
	for range 100 {
		out, err := pw.step()
		errs = append(errs, err)
		if b := pw.block(); b != nil && b.Phase.Terminal() {
			break
		}
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
	}
	return errs
}

func plannedPromotion(t *testing.T, w *world) (string, []error) {
	return "b", plannedRun(t, w, "b", false)
}

func plannedRollback(t *testing.T, w *world) (string, []error) {
	return "a", plannedRun(t, w, "b:maxLagWait=2s", true)
}

// TestLeaseFenceArmedBeforeWritable: every step that makes a site writable
// first arms its mysqld's lease fence, counted from its sidecar's last ask
// (lease 20 s, peerCheckInterval 5 s, the arm's timeout 2 s); a step whose
// arm fails or is refused does not make the site writable.
func TestLeaseFenceArmedBeforeWritable(t *testing.T) {
	steps := []struct {
		name string
		run  leaseFenceStep
	}{
		{"emergency promotion", emergencyPromotion},
		{"planned promotion", plannedPromotion},
		{"planned rollback's unfence", plannedRollback},
	}
	situations := []struct {
		name   string
		asked  time.Duration // before each pass; -1: never
		armErr error
		want   time.Duration // the arm's time; 0: not made writable; -1: made writable, held
	}{
		{"asked 3 s ago: armed for the rest of the lease and a tick, less slack and timeout", 3 * time.Second, nil, 19 * time.Second},
		{"asked two ticks ago", 10 * time.Second, nil, 12 * time.Second},
		{"the arm fails", 3 * time.Second, errors.New("arm lease fence: Lost connection"), 0},
		{"the arm waits on the sidecar's write hold: the hold guards it", 3 * time.Second,
			fmt.Errorf("arm: %w: Lock wait timeout exceeded", ErrWritesHeld), -1},
		{"asked too long ago to arm", 21 * time.Second, nil, 0},
		{"never asked", -1, nil, 0},
	}
	for _, st := range steps {
		for _, sit := range situations {
			t.Run(st.name+"/"+sit.name, func(t *testing.T) {
				w := newWorld(t)
				w.persisted.Spec.Sidecar.LeaseTimeout = metav1.Duration{Duration: 20 * time.Second}
				w.persisted.Spec.Sidecar.PeerCheckInterval = metav1.Duration{Duration: 5 * time.Second}
				w.asked, w.armErr = map[string]time.Duration{}, sit.armErr
				if sit.asked >= 0 {
					w.asked["a"], w.asked["b"] = sit.asked, sit.asked
				}
				site, errs := st.run(t, w)
				if len(w.unarmed) > 0 {
					t.Fatalf("made writable without the lease fence armed: %v", w.unarmed)
				}
				if sit.want < 0 {
					if !w.sites[site].writable || !slices.Contains(w.held, site) || slices.Contains(w.events, v1alpha1.EventLeaseFenceNotArmed) {
						t.Fatalf("%s writable %v, held %v, events %v; want writable under the hold", site, w.sites[site].writable, w.held, w.events)
					}
					return
				}
				if sit.want > 0 {
					if !w.sites[site].writable || w.armedAfter[site] != sit.want {
						t.Fatalf("%s writable %v, armed for %s; want writable, armed for %s (errors %v)",
							site, w.sites[site].writable, w.armedAfter[site], sit.want, errs)
					}
					return
				}
				if w.sites[site].writable {
					t.Fatalf("%s made writable", site)
				}
				// No statement that could make it writable was sent: the
				// claim is withdrawn, or the next failover would wait for
				// evidence that it cannot write.
				if MaybeWritable(&w.persisted.Status, site) {
					t.Fatalf("%s left maybe-writable by a claim whose statement was never sent", site)
				}
				if !slices.Contains(w.events, v1alpha1.EventLeaseFenceNotArmed) {
					t.Fatalf("events %v lack %s", w.events, v1alpha1.EventLeaseFenceNotArmed)
				}
				if st.name != "planned promotion" && !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, ErrLeaseFence) }) {
					t.Fatalf("errors %v: none wraps ErrLeaseFence", errs)
				}
			})
		}
	}
}

// TestLeaseFenceNoneForAShortLease: a group whose lease is too short for
// any lease fence (1.5 s and a 0.5 s tick) has none, from its sidecars or
// the operator: the promotion goes on without one.
func TestLeaseFenceNoneForAShortLease(t *testing.T) {
	w := newWorld(t)
	w.asked = map[string]time.Duration{"b": 0}
	site, errs := emergencyPromotion(t, w)
	if errs[0] != nil || !w.sites[site].writable || len(w.armed) > 0 || slices.Contains(w.events, v1alpha1.EventLeaseFenceNotArmed) {
		t.Fatalf("err %v, writable %v, armed %v, events %v", errs[0], w.sites[site].writable, w.armed, w.events)
	}
}
