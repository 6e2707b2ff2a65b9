package grouploop

import (
	"errors"
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
	io := func(running string, errno int) observation {
		return observation{status: mysql.Status{Replica: &mysql.ReplicaStatus{IORunning: running, SQLRunning: true,
			LastIOErrno: errno}}}
	}
	tests := []struct {
		name                  string
		view                  topology.SiteView
		obs                   observation
		down, fence, receiver bool
	}{
		{"read-only: up", view("b", v1alpha1.StateReadOnly, nil), observation{}, false, false, false},
		{"writable (the active site): up", view("b", v1alpha1.StateWritable, nil), observation{}, false, false, false},
		{"unreachable: down", view("b", v1alpha1.StateUnreachable, nil), observation{}, true, false, false},
		{"unknown: down", view("b", v1alpha1.StateUnknown, nil), observation{}, true, false, false},
		{"diverged: down", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.Diverged = true }), observation{}, true, false, false},
		{"applier broken: down", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.Replication.SQLError = true }),
			observation{}, true, false, false},
		{"admin-fenced: up, marked", view("b", v1alpha1.StateReadOnly, func(v *topology.SiteView) { v.AdminFenced = true }),
			observation{}, false, true, false},
		{"IO thread running: up", view("b", v1alpha1.StateReadOnly, nil), io(mysql.ThreadYes, 0), false, false, false},
		{"IO thread reconnecting without an error: up", view("b", v1alpha1.StateReadOnly, nil),
			io(mysql.ThreadConnecting, 0), false, false, false},
		{"IO thread retrying after an error (cut off from the primary): receiver down", view("b", v1alpha1.StateReadOnly, nil),
			io(mysql.ThreadConnecting, 2003), false, false, true},
		{"IO thread stopped: receiver down", view("b", v1alpha1.StateReadOnly, nil), io(mysql.ThreadNo, 0), false, false, true},
		{"IO thread stopped on an error: receiver down", view("b", v1alpha1.StateReadOnly, nil), io(mysql.ThreadNo, 1236), false, false, true},
		{"the probe failed: the judged view decides", view("b", v1alpha1.StateReadOnly, nil),
			observation{err: errors.New("probe: timed out"), status: io(mysql.ThreadNo, 0).status}, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Spec.MySQL.SemiSync.Enabled = true
			g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}}
			g.Status.ActiveSite = "a"
			l := &Loop{conns: newConns(nil, nil), obs: map[string]observation{"b": tc.obs}}
			in := l.semiSyncInput(g, []topology.SiteView{view("a", v1alpha1.StateWritable, nil), tc.view})
			if got := in.Sites[1]; got.Down != tc.down || got.AdminFenced != tc.fence || got.ReceiverDown != tc.receiver {
				t.Fatalf("b: %+v, want down %v, admin-fenced %v, receiver down %v", got, tc.down, tc.fence, tc.receiver)
			}
		})
	}
}
