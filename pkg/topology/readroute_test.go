package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestReadRoutes: a site serves reads only while it is healthy, and each
// way of being unhealthy is named.
func TestReadRoutes(t *testing.T) {
	const rw, ro = v1alpha1.StateWritable, v1alpha1.StateReadOnly
	replica := func(mod func(*SiteView)) SiteView {
		s := SiteView{Name: "b", State: ro, Replication: Replication{Running: true, Lag: time.Second}}
		if mod != nil {
			mod(&s)
		}
		return s
	}
	primary := SiteView{Name: "a", State: rw}
	cases := []struct {
		name       string
		site       SiteView
		recovering bool
		want       ReadReason
	}{
		{"a healthy replica", replica(nil), false, ReadRoutable},
		{"a replica exactly at the lag limit", replica(func(s *SiteView) { s.Replication.Lag = 30 * time.Second }), false, ReadRoutable},
		{"a replica past the lag limit", replica(func(s *SiteView) { s.Replication.Lag = 31 * time.Second }), false, ReadLagging},
		{"a replica with stopped threads", replica(func(s *SiteView) { s.Replication.Running = false }), false, ReadNotReplicating},
		{"a replica whose applier stopped on an error", replica(func(s *SiteView) { s.Replication.SQLError = true }), false, ReadNotReplicating},
		{"a replica whose IO thread reports an error", replica(func(s *SiteView) { s.Replication.Error = "1236" }), false, ReadNotReplicating},
		{"an unreachable replica", replica(func(s *SiteView) { s.State = v1alpha1.StateUnreachable }), false, ReadUnreachable},
		{"a replica never seen", replica(func(s *SiteView) { s.State = v1alpha1.StateUnknown }), false, ReadUnreachable},
		{"a diverged replica", replica(func(s *SiteView) { s.Diverged = true }), false, ReadDiverged},
		{"an administrator-fenced replica", replica(func(s *SiteView) { s.AdminFenced = true }), false, ReadFenced},
		{"a dr-only replica", replica(func(s *SiteView) { s.Role = v1alpha1.RoleDROnly }), false, ReadDROnly},
		{"a read-only-role replica serves reads", replica(func(s *SiteView) { s.Role = v1alpha1.RoleReadOnly }), false, ReadRoutable},
		{"a replica a reclone runs for", replica(nil), true, ReadRecovering},
		{"a replica whose data a reclone replaced", replica(func(s *SiteView) { s.DataReplaced, s.AdminFenced = true, true }), false, ReadRecovering},
		{"a replica that may be writable", replica(func(s *SiteView) { s.MaybeWritable = true }), false, ReadMaybeWritable},
		{"a second writer", replica(func(s *SiteView) { s.State = rw }), false, ReadExtraWriter},
		{"a stale but debounced-healthy replica keeps its place", replica(func(s *SiteView) { s.Stale = true }), false, ReadRoutable},
		{"the writable primary", primary, false, ReadRoutable},
		{"the primary fenced read-only (drain, fence)", SiteView{Name: "a", State: ro}, false, ReadPrimaryNotWritable},
		{"the primary unreachable", SiteView{Name: "a", State: v1alpha1.StateUnreachable}, false, ReadUnreachable},
		{"the primary fenced by an administrator", SiteView{Name: "a", State: rw, AdminFenced: true}, false, ReadFenced},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ReadRouteInput{Sites: []SiteView{c.site}, Active: "a", MaxLag: 30 * time.Second,
				Recovering: map[string]bool{c.site.Name: c.recovering}}
			got := ReadRoutes(in)
			if len(got) != 1 || got[0].Site != c.site.Name {
				t.Fatalf("routes %+v, want one for %s", got, c.site.Name)
			}
			if got[0].Reason != c.want || got[0].Routable != (c.want == ReadRoutable) {
				t.Errorf("got %+v, want reason %s", got[0], c.want)
			}
		})
	}
}

// TestReadRoutesZeroLagLimit: maxLagSeconds 0 takes only replicas that are
// not behind at all.
func TestReadRoutesZeroLagLimit(t *testing.T) {
	sites := []SiteView{
		{Name: "a", State: v1alpha1.StateWritable},
		{Name: "b", State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}},
		{Name: "c", State: v1alpha1.StateReadOnly, Replication: Replication{Running: true, Lag: time.Second}},
	}
	got := ReadRoutes(ReadRouteInput{Sites: sites, Active: "a"})
	want := []bool{true, true, false}
	for i, r := range got {
		if r.Routable != want[i] {
			t.Errorf("%s routable %v (%s), want %v", r.Site, r.Routable, r.Reason, want[i])
		}
	}
}
