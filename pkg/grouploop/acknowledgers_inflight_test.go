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

// TestAckBoundNotFromTheInFlightTarget: during an emergency failover the
// active site markAcknowledgers reads is the not-yet-promoted target c, a
// replica with no semi-sync clients, so clientsAccounted always holds and
// every unread site is "bounded" by c's own executed set, which c holds by
// definition: the AcknowledgerUnreachable block can never fire for the
// in-flight promotion. b acknowledged a's commits (part on when last read)
// and may hold commits c lacks; it must stay unbounded.
func TestAckBoundNotFromTheInFlightTarget(t *testing.T) {
	const x = "00000000-0000-0000-0000-00000000000a"
	aEP := mysql.Endpoint{Host: "a.example", Port: 3306}
	g := inFlightRequired("c")
	l := &Loop{conns: newConns(nil, nil)}
	l.conns.sites = map[string]*siteConn{"a": {access: SiteAccess{Endpoint: aEP}}}
	failed := observation{at: time.Unix(1, 0), err: errors.New("probe: timed out")}
	// c, the target: read-only replica of a (IO thread cut off), no source part.
	target := observation{at: time.Unix(1, 0), status: mysql.Status{Executed: gtid.MustParseSet(x + ":1-5"),
		SemiSync: mysql.SemiSync{ReplicaEnabled: true},
		Replica:  &mysql.ReplicaStatus{SourceHost: aEP.Host, SourcePort: aEP.Port, IORunning: mysql.ThreadConnecting}}}
	l.obs = map[string]observation{"a": failed, "b": failed, "c": target}
	sites := []topology.SiteView{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	l.markAcknowledgers(g, sites)
	b := sites[1]
	if !b.MayAcknowledge || b.AckBoundKnown {
		t.Fatalf("b may acknowledge %v, bound known %v (%s); want true, unbounded: c was never a source",
			b.MayAcknowledge, b.AckBoundKnown, b.AckBound)
	}
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
