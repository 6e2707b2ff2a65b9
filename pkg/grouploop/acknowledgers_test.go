package grouploop

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestMarkAcknowledgers: under required durability, which sites Decide is
// told may hold acknowledged commits.
func TestMarkAcknowledgers(t *testing.T) {
	replica := func(on bool) observation {
		return observation{at: time.Unix(1, 0), status: mysql.Status{SemiSync: mysql.SemiSync{ReplicaEnabled: on}}}
	}
	failed := observation{at: time.Unix(1, 0), err: errors.New("probe: timed out")}
	tests := []struct {
		name     string
		required bool
		recordOn bool // b's status says its replica part was on when last read
		b        observation
		want     bool
	}{
		{"preferred: nothing is marked", false, true, failed, false},
		{"b read with its part on: marked, and compared by Decide", true, false, replica(true), true},
		{"b read with its part off: not marked", true, true, replica(false), false},
		{"b unread, its part on when last read: marked", true, true, failed, true},
		{"b unread, its part off when last read: not marked", true, false, failed, false},
		{"b never probed by this process: its record decides", true, true, observation{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Spec.MySQL.SemiSync.Enabled = true
			if tc.required {
				g.Spec.MySQL.SemiSync.DataDurability = v1alpha1.DurabilityRequired
			}
			g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}, {Name: "c"}}
			g.Status.ActiveSite = "a"
			g.Status.Sites = []v1alpha1.SiteStatus{{Name: "b", SemiSync: &v1alpha1.SiteSemiSync{Replica: tc.recordOn}}}
			l := &Loop{obs: map[string]observation{"a": replica(false), "b": tc.b, "c": replica(true)}}
			sites := []topology.SiteView{{Name: "a"}, {Name: "b"}, {Name: "c"}}
			l.markAcknowledgers(g, sites)
			if sites[1].MayAcknowledge != tc.want {
				t.Fatalf("b may acknowledge %v, want %v", sites[1].MayAcknowledge, tc.want)
			}
			if sites[0].MayAcknowledge {
				t.Fatal("the source a is marked")
			}
		})
	}
}
