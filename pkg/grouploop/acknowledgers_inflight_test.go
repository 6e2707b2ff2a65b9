package grouploop

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// inFlightRequired is a group under required durability whose emergency
// failover a->c is in flight before promotion: status.activeSite is
// already c (Emergency.begin), b's record says its replica part was on.
func inFlightRequired(to string) *v1alpha1.MysqlFailoverGroup {
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Spec.MySQL.SemiSync.Enabled = true
	g.Spec.MySQL.SemiSync.DataDurability = v1alpha1.DurabilityRequired
	g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	g.Status.ActiveSite = to
	g.Status.Failover = &v1alpha1.FailoverIntent{From: "a", To: to, Step: v1alpha1.StepFencing}
	on := &v1alpha1.SiteSemiSync{Replica: true}
	g.Status.Sites = []v1alpha1.SiteStatus{{Name: "b", SemiSync: on}, {Name: "c", SemiSync: on}}
	return g
}

// TestInFlightTargetMarked: the in-flight target b, which was the
// replica acknowledging a's commits, stops answering before its promotion.
// markAcknowledgers skips it because it is status.activeSite, so it is
// never MayAcknowledge and a retarget to c goes on without what b holds.
func TestInFlightTargetMarked(t *testing.T) {
	g := inFlightRequired("b")
	l := &Loop{conns: newConns(nil, nil)}
	failed := observation{at: time.Unix(1, 0), err: errors.New("probe: timed out")}
	l.obs = map[string]observation{"a": failed, "b": failed, "c": {at: time.Unix(1, 0)}}
	sites := []topology.SiteView{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	l.markAcknowledgers(g, sites)
	if !sites[1].MayAcknowledge {
		t.Fatalf("in-flight target b (part on when last read, unread now) not marked MayAcknowledge")
	}
}
