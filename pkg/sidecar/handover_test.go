package sidecar_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestReexecFirstCheck: the first check of a process that took a handover
// over. Found by the in-place-upgrade scenario: a replica's new process,
// holding a view naming another site and knowing nothing of its mysqld,
// fenced its read-only replica blindly. The state last seen is handed over
// too; a mysqld last seen writable under a view naming another site is
// still fenced at once, and a refused handover is a fresh boot.
func TestReexecFirstCheck(t *testing.T) {
	view := sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "pdx", Generation: 3,
		ObservedAt: time.Now()})
	base := sidecar.Handover{Namespace: "shop", Group: "orders", Site: "iad", View: &view, Source: "operator",
		OpView: &view, BootAge: time.Minute, ContactAge: time.Second, OperatorAge: time.Second}
	cases := []struct {
		name     string
		lastSeen sidecar.DBState
		writable bool
		stale    bool // saved by another pid: refused
		fences   int
		handed   bool
	}{
		{"a read-only replica is left alone", sidecar.DBReadOnly, false, false, 0, true},
		{"a mysqld last seen writable is fenced first", sidecar.DBWritable, true, false, 1, true},
		{"a writable mysqld last seen read-only is fenced on the read", sidecar.DBReadOnly, true, false, 1, true},
		{"a refused handover is a fresh boot: the boot net fences a writable mysqld", sidecar.DBReadOnly, true, true, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := sidecar.FreshHandover(base)
			h.LastSeen = c.lastSeen
			if c.stale {
				h.PID++
			}
			db := &fakeDB{writable: c.writable}
			r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
				LeaseTimeout: 20 * time.Second, PeerCheckInterval: 5 * time.Second, Keys: sidecar.TestKeys},
				OperatorURL: "http://127.0.0.1:1", Logger: quietLogger(), Handover: &h}, db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r.Start(t.Context())
			if _, fences := db.state(); fences != c.fences {
				t.Fatalf("%d fences, want %d", fences, c.fences)
			}
			if st := r.Status(); st.HandedOver != c.handed {
				t.Fatalf("handedOver %v, want %v", st.HandedOver, c.handed)
			}
		})
	}
}
