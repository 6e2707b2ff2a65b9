package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestOneAck: a failover's target is made the semi-sync source with the
// flavor's acknowledgement rule even when the old active site never
// answered this process (MariaDB refuses a count above one).
func TestOneAck(t *testing.T) {
	seen := func(f v1alpha1.Flavor) observation { return observation{status: mysql.Status{Flavor: f}} }
	tests := []struct {
		name   string
		flavor v1alpha1.Flavor
		last   map[string]observation
		want   bool
	}{
		{"spec says mariadb", v1alpha1.FlavorMariaDB, nil, true},
		{"spec says mysql", v1alpha1.FlavorMySQL, map[string]observation{"a": seen(v1alpha1.FlavorMariaDB)}, false},
		{"auto: the active site's flavor", v1alpha1.FlavorAuto, map[string]observation{"a": seen(v1alpha1.FlavorMariaDB)}, true},
		{"auto, the active site never answered: another site's", v1alpha1.FlavorAuto,
			map[string]observation{"b": seen(v1alpha1.FlavorMariaDB)}, true},
		{"auto, nothing answered: the count as asked", v1alpha1.FlavorAuto, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Spec.MySQL.Flavor = tc.flavor
			g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}}
			g.Status.ActiveSite = "a"
			l := &Loop{last: tc.last}
			if got := l.oneAck(g); got != tc.want {
				t.Fatalf("oneAck = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSemiSyncInputDown: the sites that cannot acknowledge now, by the
// pass's judged views, are Down and take no acknowledger slot (a dead old
// primary must not keep its slot after a failover).
func TestSemiSyncInputDown(t *testing.T) {
	view := func(name string, state v1alpha1.SiteState, f func(*topology.SiteView)) topology.SiteView {
		v := topology.SiteView{Name: name, State: state}
		if f != nil {
			f(&v)
		}
		return v
	}
	tests := []struct {
		name        string
		view        topology.SiteView
		down, fence bool
	}{
		{"read-only: up", view("b", v1alpha1.StateReadOnly, nil), false, false},
		{"writable (the active site): up", view("b", v1alpha1.StateWritable, nil), false, false},
		{"unreachable: down", view("b", v1alpha1.StateUnreachable, nil), true, false},
		{"unknown: down", view("b", v1alpha1.StateUnknown, nil), true, false},
		{"diverged: down", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.Diverged = true }), true, false},
		{"applier broken: down", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.Replication.SQLError = true }),
			true, false},
		{"admin-fenced: up, marked", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.AdminFenced = true }),
			false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Spec.MySQL.SemiSync.Enabled = true
			g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}}
			g.Status.ActiveSite = "a"
			l := &Loop{conns: newConns(nil, nil), obs: map[string]observation{}}
			in := l.semiSyncInput(g, []topology.SiteView{view("a", v1alpha1.StateWritable, nil), tc.view})
			if got := in.Sites[1]; got.Down != tc.down || got.AdminFenced != tc.fence {
				t.Fatalf("b: %+v, want down %v, admin-fenced %v", got, tc.down, tc.fence)
			}
		})
	}
}
