package grouploop

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// recordProgress sets the Progressing condition (topology.Progress) and
// status.primaryFailingSince (topology.PrimaryFailing) after a pass.
func (l *Loop) recordProgress(g *v1alpha1.MysqlFailoverGroup, p failover.Pass) {
	st := &g.Status
	in := topology.ProgressInput{Failover: failover.InFlight(st), Updating: st.Phase == v1alpha1.GroupPhaseUpdating}
	if failover.PlannedInFlight(st) {
		in.PlannedTarget = st.PlannedFailover.Target
	}
	for _, s := range st.Sites {
		if s.Recovery != nil && !s.Recovery.Phase.Terminal() {
			in.Recloning = append(in.Recloning, s.Name)
		}
	}
	ok, reason, msg := topology.Progress(in)
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	now := l.env.Clock.Now()
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionProgressing, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: g.Generation, LastTransitionTime: stamp(now)})

	active := failover.SiteStatusOf(st, st.ActiveSite)
	view, _ := p.Input.Site(st.ActiveSite)
	var since *time.Time
	if st.PrimaryFailingSince != nil {
		t := st.PrimaryFailingSince.Time
		since = &t
	}
	switch got := topology.PrimaryFailing(since, active.State, in.PlannedTarget != "", view.AdminFenced, now); {
	case got == nil:
		st.PrimaryFailingSince = nil
	case since == nil || !got.Equal(*since):
		t := stamp(*got)
		st.PrimaryFailingSince = &t
	}
}
