package sim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRestartMidFailoverAtEveryWrite restarts the operator's container in
// its Pod right after each status write of an emergency and of a planned
// failover (the rest of the pass lost), and checks what the restarted
// process does: it leads again at once, finishes the failover within a
// few steps of its restart, makes the target writable exactly once, and
// breaks no invariant (never two writers, no acknowledged write lost).
func TestRestartMidFailoverAtEveryWrite(t *testing.T) {
	scenarios := []struct {
		name   string
		sched  string
		done   string
		writes int
	}{
		{"emergency", "at=8 crash-mysqld site=0 dur=200", "FailoverExecuted: pdx is primary", 9},
		{"planned", "at=10 slow-replica site=1 dur=2; at=10 planned site=1", "PlannedFailoverCompleted: iad -> pdx Succeeded", 12},
	}
	for _, sc := range scenarios {
		for by := 1; by <= sc.writes; by++ {
			t.Run(fmt.Sprintf("%s/after write %d", sc.name, by), func(t *testing.T) {
				at := strings.SplitN(strings.TrimPrefix(sc.sched, "at="), " ", 2)[0]
				r := runRestart(t, fmt.Sprintf("%s; at=%s restart-operator by=%d dur=1", sc.sched, at, by))
				trace := strings.Join(r.Trace, "\n")
				if r.Failed() {
					t.Fatalf("broke %d invariants:\n%s", len(r.Violations), r.Report())
				}
				if n := strings.Count(trace, "operator unfenced pdx"); n != 1 {
					t.Fatalf("pdx made writable %d times, want once:\n%s", n, trace)
				}
				died, back, done := traceStep(r.Trace, "operator container died"),
					traceStep(r.Trace, "leads again: its Lease names its own Pod"), traceStep(r.Trace, sc.done)
				switch {
				case done < 0:
					t.Fatalf("the failover never finished:\n%s", trace)
				case died < 0:
					t.Logf("no crash: the failover made fewer than %d writes", by)
					return
				case back != died+1:
					t.Fatalf("died at step %d, led again at %d: want the next step (the container's restart)\n%s", died, back, trace)
				case done > back+maxResume:
					t.Fatalf("restarted at step %d, finished at %d: more than %d steps\n%s", back, done, maxResume, trace)
				}
			})
		}
	}
}

// maxResume bounds the steps from a restart to the end of the failover in
// TestRestartMidFailoverAtEveryWrite: the new process hears from the
// sidecars again (a peerCheckInterval, 2 steps) before it confirms a fence
// by a sidecar's report or lets a target be made writable, and pdx's
// stalled replication lasts 2 steps.
const maxResume = 5

func runRestart(t *testing.T, schedule string) Result {
	t.Helper()
	cfg := ConfigForSeed(24, 60)
	cfg.Roles = []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate}
	cfg.PollInterval, cfg.PeerCheckInterval, cfg.LeaseTimeout = time.Second, 2*time.Second, 6*time.Second
	cfg.FailureThreshold, cfg.RecoveryThreshold, cfg.Cooldown, cfg.WriteChance = 2, 1, 30*time.Second, 1
	cfg.MaxLagWait, cfg.DrainTimeout, cfg.OperatorReplicas = 20*time.Second, 10*time.Second, 1
	sched, err := ParseSchedule(schedule)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Schedule = sched
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// traceStep is the step of the first trace line holding s, -1 if none.
func traceStep(trace []string, s string) int {
	for _, l := range trace {
		if strings.Contains(l, s) {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.Fields(l)[0], "t="))
			if err == nil {
				return n
			}
		}
	}
	return -1
}
