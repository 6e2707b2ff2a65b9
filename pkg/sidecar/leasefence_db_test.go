//go:build db

package sidecar_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// leaseTiming is long enough for the lease fence to be armed (it needs two
// seconds or more): lease 4 s, tick 1 s.
var leaseTiming = timing{lease: 4 * time.Second, tick: time.Second}

// TestPausedSidecarLeaseFence: a primary whose sidecar stops acting while
// its mysqld runs on (a paused process) is fenced by mysqld itself, by the
// lease fence the sidecar kept pushing, before the operator's lease
// deadline (the sidecar's last renewal + lease + a tick). While the
// sidecar runs, the fence never fires.
func TestPausedSidecarLeaseFence(t *testing.T) {
	_, _, iad, _ := twoSitesWith(t, leaseTiming)
	// Healthy for a while: armed again and again, never fired.
	time.Sleep(3 * leaseTiming.lease)
	if !iad.writable(t) {
		t.Fatal("the lease fence fired while the sidecar ran")
	}
	if n := iad.metric(t, sidecar.MetricLeaseFenceArms, `result="ok"`); n < 5 {
		t.Fatalf("lease fence armed %v times in %s, want one per tick", n, 3*leaseTiming.lease)
	}
	if n := iad.metric(t, sidecar.MetricLeaseFenceArms, `result="failed"`); n != 0 {
		t.Logf("lease fence arms failed %v times (a loaded machine)", n)
	}
	st := iad.runner.Status()
	if st.LastContact == nil {
		t.Fatal("no contact renewed the lease")
	}
	renewed := *st.LastContact
	iad.halt()
	paused := time.Now()
	fenced := eventually(t, 2*leaseTiming.lease, "mysqld fences itself", func() bool { return !iad.writable(t) })
	deadline := renewed.Add(leaseTiming.lease + leaseTiming.tick)
	t.Logf("fenced %s after the pause; the operator's deadline was %s after it",
		fenced.Sub(paused).Round(10*time.Millisecond), deadline.Sub(paused).Round(10*time.Millisecond))
	if fenced.After(deadline) {
		t.Fatalf("fenced at %s, after the operator's lease deadline %s", fenced.Format(time.StampMilli), deadline.Format(time.StampMilli))
	}
	if _, err := iad.appDB(t).ExecContext(ctxFor(t, 5*time.Second), "INSERT INTO t (v) VALUES (1)"); err == nil {
		t.Fatal("an application write went through after the lease fence")
	}
}
