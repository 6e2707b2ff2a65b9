package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRoutesSettled (review of issue 20): a pass judges read routes on
// probes taken before it acted. While a failover holds the topology, or
// when the pass moved the active site or the generation, those probes may
// show as writable and healthy an old primary the pass just fenced or
// demoted, and put it back in -any: no read routes are judged then.
func TestRoutesSettled(t *testing.T) {
	base := v1alpha1.MysqlFailoverGroupStatus{ActiveSite: "a", TopologyGeneration: 3}
	cases := []struct {
		name       string
		start, now func(*v1alpha1.MysqlFailoverGroupStatus)
		want       bool
	}{
		{"nothing moved", nil, nil, true},
		{"an emergency failover at the start", func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b"}
		}, nil, false},
		{"an emergency failover started by the pass", nil, func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b"}
		}, false},
		{"a planned failover draining", func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseDraining}
		}, func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseDraining}
		}, false},
		{"a planned failover completed by the pass", func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhasePromoting}
		}, func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseSucceeded}
			s.ActiveSite, s.TopologyGeneration = "b", 4
		}, false},
		{"the active site moved", nil, func(s *v1alpha1.MysqlFailoverGroupStatus) { s.ActiveSite = "b" }, false},
		{"the generation moved", nil, func(s *v1alpha1.MysqlFailoverGroupStatus) { s.TopologyGeneration = 4 }, false},
		{"a finished planned failover holds nothing", func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseSucceeded}
		}, func(s *v1alpha1.MysqlFailoverGroupStatus) {
			s.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseSucceeded}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start, now := base, base
			if c.start != nil {
				c.start(&start)
			}
			if c.now != nil {
				c.now(&now)
			}
			if got := routesSettled(&start, &now); got != c.want {
				t.Fatalf("routesSettled = %v, want %v", got, c.want)
			}
		})
	}
}
