//go:build envtest

package controller_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// sidecarTimings are spec.sidecar's leaseTimeout and peerCheckInterval.
type sidecarTimings struct{ lease, interval time.Duration }

// defaultSidecarTimings are the CRD's defaults, which production runs with.
var defaultSidecarTimings = sidecarTimings{lease: 20 * time.Second, interval: 5 * time.Second}

// useSidecarTimings makes the group (createGroup(st.spec)) and the sidecars
// started afterwards use st instead of the test timings.
func (e *env) useSidecarTimings(st sidecarTimings) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sidecarTimings = &st
}

// spec sets spec.sidecar to st; mod, when set, changes the spec further.
func (st sidecarTimings) spec(mod func(map[string]any)) func(map[string]any) {
	return func(spec map[string]any) {
		spec["sidecar"] = map[string]any{"leaseTimeout": st.lease.String(), "peerCheckInterval": st.interval.String()}
		if mod != nil {
			mod(spec)
		}
	}
}

func (e *env) sidecarLeaseAndInterval() (time.Duration, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st := e.sidecarTimings; st != nil {
		return st.lease, st.interval
	}
	return leaseTimeout, peerCheckInterval
}

// noteSidecars records where the sidecars of sites listen.
func (e *env) noteSidecars(sites, urls []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sidecarURLs == nil {
		e.sidecarURLs = map[string]string{}
	}
	for i, s := range sites {
		e.sidecarURLs[s] = urls[i]
	}
}

// sidecarURL is the operator's controller.SidecarURL: this test's running
// sidecars, "" (not nudged) for anything else.
func (e *env) sidecarURL(ns, group, site string) string {
	if ns != e.ns || group != "orders" {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sidecarURLs[site]
}

// sidecarGeneration is the generation site's sidecar serves on
// /peer/active-site, 0 when it holds none or does not answer.
func (e *env) sidecarGeneration(site string) int64 {
	resp, err := http.Get(e.sidecarURL(e.ns, "orders", site) + v1alpha1.PathPeerActiveSite)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	var v v1alpha1.ActiveSiteView
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		return 0
	}
	return v.Generation
}

// sidecarCounter reads an unlabelled counter from site's sidecar /metrics.
func (e *env) sidecarCounter(site, name string) float64 {
	e.t.Helper()
	resp, err := http.Get(e.sidecarURL(e.ns, "orders", site) + sidecar.PathMetrics)
	if err != nil {
		e.t.Fatalf("%s sidecar metrics: %v", site, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				e.t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	e.t.Fatalf("%s sidecar: no %s", site, name)
	return 0
}

// adoption polls, every 10 ms, the group's status and target's sidecar until
// the sidecar holds a generation above gen. It returns when the status first
// showed the new generation and when the sidecar first held it.
func (e *env) adoption(target string, gen int64, within time.Duration) (published, held time.Time) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if published.IsZero() && e.get().Status.TopologyGeneration > gen {
			published = time.Now()
		}
		if e.sidecarGeneration(target) > gen {
			held = time.Now()
			if published.IsZero() {
				published = held
			}
			return published, held
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("%s's sidecar did not hold a generation above %d within %s", target, gen, within)
	return
}

// With the default sidecar timings (peerCheckInterval 5 s), the operator's
// nudge makes the target's sidecar hold the new generation well within a
// second of its publication, instead of at its next tick (2.5 s later on
// average, up to 5 s), so the switchover is not held up by the wait for it.
func TestNudgePlannedWithDefaultSidecarTimings(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.useSidecarTimings(defaultSidecarTimings)
	e.createGroup(defaultSidecarTimings.spec(nil))
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.eventually(20*time.Second, "b replicating", func() bool {
		s := site(e.get(), "b")
		return s.State == v1alpha1.StateReadOnly && s.Replicating
	})
	gen := e.get().Status.TopologyGeneration
	ticksBefore := e.sidecarCounter("b", sidecar.MetricRefreshTicks)

	start := time.Now()
	e.annotate("b")
	published, held := e.adoption("b", gen, 10*time.Second)
	g := e.planned("b", v1alpha1.PhaseSucceeded, 20*time.Second)
	took := time.Since(start)
	lag := held.Sub(published)
	t.Logf("generation %d published %s after the request; b's sidecar held it %s later; switchover %s",
		gen+1, published.Sub(start).Round(time.Millisecond), lag.Round(time.Millisecond), took.Round(time.Millisecond))
	if lag > time.Second {
		t.Errorf("b's sidecar held the new generation %s after it was published, want within 1s", lag)
	}
	if n := e.sidecarCounter("b", sidecar.MetricRefreshTicks) - ticksBefore; n < 1 {
		t.Errorf("b's sidecar ran %v refresh ticks during the switchover, want at least 1", n)
	}
	if g.Status.ActiveSite != "b" || g.Status.TopologyGeneration != gen+1 {
		t.Fatalf("status after the switchover: %+v", g.Status)
	}
	if limit := 3 * time.Second; took > limit {
		t.Errorf("switchover took %s with a 5s peerCheckInterval, want within %s", took, limit)
	}
}

// An emergency failover with the default sidecar timings: the nudge makes
// the old primary's sidecar report its mysqld down, and the target's
// sidecar hold the new generation, at once, so the target is writable about
// as soon as with the test timings.
func TestNudgeEmergencyWithDefaultSidecarTimings(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.useSidecarTimings(defaultSidecarTimings)
	e.createGroup(defaultSidecarTimings.spec(nil))
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	gen := e.get().Status.TopologyGeneration
	e.db.Kill(0)
	took := e.eventually(20*time.Second, "b writable", func() bool { return e.writable("b") })
	t.Logf("b writable %s after the kill (detection window %s)", took.Round(time.Millisecond), detection)
	if limit := detection + time.Second + loadAllowance; took > limit {
		t.Errorf("b writable after %s with a 5s peerCheckInterval, want within %s", took, limit)
	}
	if got := e.sidecarGeneration("b"); got != gen+1 {
		t.Errorf("b's sidecar holds generation %d, want %d", got, gen+1)
	}
}

// benchSettings reads the benchmark's environment: BLOODRAVEN_BENCH_SIDECAR=default
// for the default sidecar timings, BLOODRAVEN_BENCH_NUDGE=off for no nudges.
// It returns the group's spec change (over mod) and the operator's, and
// prints them as the first line of figures.
func (e *env) benchSettings(mod func(map[string]any)) (func(map[string]any), func(*controller.Deps, *controller.Options)) {
	st := sidecarTimings{lease: leaseTimeout, interval: peerCheckInterval}
	if v := os.Getenv("BLOODRAVEN_BENCH_SIDECAR"); v == "default" {
		st = defaultSidecarTimings
		e.useSidecarTimings(st)
	}
	nudge := os.Getenv("BLOODRAVEN_BENCH_NUDGE") != "off"
	fmt.Printf("planned-settings pollInterval=%s peerCheckInterval=%s leaseTimeout=%s nudge=%v\n",
		pollInterval, st.interval, st.lease, nudge)
	return st.spec(mod), func(_ *controller.Deps, o *controller.Options) {
		if !nudge {
			o.NudgeTimeout = -1
		}
	}
}
