package grouploop

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestMarkAcknowledgers: under required durability, which sites Decide is
// told may hold acknowledged commits, and what bounds them, pass by pass.
func TestMarkAcknowledgers(t *testing.T) {
	aEP := mysql.Endpoint{Host: "a.example", Port: 3306}
	src := func(clients int, executed string) observation {
		return observation{at: time.Unix(1, 0), status: mysql.Status{Executed: gtid.MustParseSet(executed),
			SemiSync: mysql.SemiSync{SourceEnabled: true, SourceActive: true, SourceClients: clients}}}
	}
	replica := func(on bool) observation {
		return observation{at: time.Unix(1, 0), status: mysql.Status{SemiSync: mysql.SemiSync{ReplicaEnabled: on},
			Replica: &mysql.ReplicaStatus{SourceHost: aEP.Host, SourcePort: aEP.Port, IORunning: mysql.ThreadYes, SQLRunning: true}}}
	}
	failed := observation{at: time.Unix(1, 0), err: errors.New("probe: timed out")}
	const x = "00000000-0000-0000-0000-00000000000a"
	type pass struct {
		obs map[string]observation
		// want: site b's MayAcknowledge and bound ("" none)
		may   bool
		bound string
	}
	tests := []struct {
		name     string
		required bool
		recordOn bool // b's status says its replica part was on when last read
		passes   []pass
	}{
		{"preferred: nothing is marked", false, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, false, ""}}},
		{"b read with its part on: may acknowledge, compared by Decide", true, false, []pass{
			{map[string]observation{"a": src(2, x+":1-5"), "b": replica(true), "c": replica(true)}, true, ""}}},
		{"b unread, part on when last read, a counts a client nobody accounts for: unbounded", true, true, []pass{
			{map[string]observation{"a": src(2, x+":1-5"), "b": failed, "c": replica(true)}, true, ""}}},
		{"b unread, every client of a accounted for by c: bounded by a's set then", true, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, true, x + ":1-5"}}},
		{"the bound is not raised while b stays unread", true, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, true, x + ":1-5"},
			{map[string]observation{"a": src(1, x+":1-9"), "b": failed, "c": replica(true)}, true, x + ":1-5"}}},
		{"a client appears nobody accounts for: the bound goes", true, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, true, x + ":1-5"},
			{map[string]observation{"a": src(2, x+":1-7"), "b": failed, "c": replica(true)}, true, ""}}},
		{"a dies: the bound from its last read stays", true, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, true, x + ":1-5"},
			{map[string]observation{"a": failed, "b": failed, "c": replica(true)}, true, x + ":1-5"}}},
		{"b read again: the bound goes with its unread spell", true, true, []pass{
			{map[string]observation{"a": src(1, x+":1-5"), "b": failed, "c": replica(true)}, true, x + ":1-5"},
			{map[string]observation{"a": src(2, x+":1-6"), "b": replica(true), "c": replica(true)}, true, ""},
			{map[string]observation{"a": src(2, x+":1-7"), "b": failed, "c": replica(true)}, true, ""}}},
		{"b unread, its part off when last read: not marked", true, false, []pass{
			{map[string]observation{"a": src(2, x+":1-5"), "b": failed, "c": replica(true)}, false, ""}}},
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
			l := &Loop{conns: newConns(nil, nil)}
			l.conns.sites = map[string]*siteConn{"a": {access: SiteAccess{Endpoint: aEP}}}
			for i, p := range tc.passes {
				l.obs = p.obs
				sites := []topology.SiteView{{Name: "a"}, {Name: "b"}, {Name: "c"}}
				l.markAcknowledgers(g, sites)
				b := sites[1]
				bound := ""
				if b.AckBoundKnown {
					bound = b.AckBound.String()
				}
				if b.MayAcknowledge != p.may || bound != p.bound {
					t.Fatalf("pass %d: b may acknowledge %v, bound %q; want %v, %q", i+1, b.MayAcknowledge, bound, p.may, p.bound)
				}
			}
		})
	}
}
