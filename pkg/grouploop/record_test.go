package grouploop

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecordSitesFenceMark checks the fence mark recordSites persists for
// site b after a pass whose probes ran before its act: the act's own mark
// wins over the stale probe, and a site the pass may have made writable is
// never held read-only.
func TestRecordSitesFenceMark(t *testing.T) {
	const (
		readOnly = "read-only"
		writable = "writable"
		down     = "unreachable"
	)
	cases := []struct {
		name string
		// active is the active site at the pass's start and after its act.
		startActive, endActive string
		// start is b's mark as read, acted its mark once the act is done.
		start, acted bool
		probe        string // b's probe, taken before the act
		want         bool
	}{
		{"failover begun and target promoted this pass", "a", "b", true, false, readOnly, false},
		{"target named active earlier, promoted this pass", "b", "b", true, false, readOnly, false},
		{"active site re-asserted without a mark to clear", "b", "b", false, false, readOnly, false},
		{"old primary of a failover begun this pass", "b", "a", false, false, readOnly, false},
		{"planned source fenced by SQL after a writable probe", "b", "b", false, true, writable, true},
		{"planned source fenced earlier, still active", "b", "b", true, true, readOnly, true},
		{"extra writer fenced by SQL after a writable probe", "a", "a", false, true, writable, true},
		{"replica seen read-only", "a", "a", false, false, readOnly, true},
		{"replica still held read-only", "a", "a", true, true, readOnly, true},
		{"marked replica seen writable", "a", "a", true, true, writable, false},
		{"unreachable target keeps the cleared mark", "a", "b", true, false, down, false},
		{"unreachable replica keeps its mark", "a", "a", true, true, down, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := testLoop()
			l.patcher = &statusPatcher{}
			l.deb, l.obs = map[string]*topology.Debouncer{}, map[string]observation{}
			for _, s := range []string{"a", "b"} {
				d, err := topology.NewDebouncer(1, 1)
				if err != nil {
					t.Fatal(err)
				}
				l.deb[s] = d
			}
			g := testGroup("orders", c.startActive, 2)
			g.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", Fenced: c.start}}
			l.patcher.reset(g)
			// The act, after the probes.
			g.Status.ActiveSite = c.endActive
			failover.SiteRecord(&g.Status, "b").Fenced = c.acted
			l.obs["a"] = observation{status: mysql.Status{}, at: t0}
			switch c.probe {
			case readOnly:
				l.obs["b"] = observation{status: mysql.Status{ReadOnly: true}, at: t0}
			case writable:
				l.obs["b"] = observation{status: mysql.Status{}, at: t0}
			default:
				l.obs["b"] = observation{err: errors.New("probe timed out"), at: t0}
			}
			l.recordSites(g)
			if got := failover.SiteRecord(&g.Status, "b").Fenced; got != c.want {
				t.Errorf("b fenced = %v, want %v", got, c.want)
			}
			if got := failover.HeldReadOnly(&g.Status, "b"); got != c.want {
				t.Errorf("HeldReadOnly(b) = %v, want %v", got, c.want)
			}
		})
	}
}
