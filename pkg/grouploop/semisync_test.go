package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
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
