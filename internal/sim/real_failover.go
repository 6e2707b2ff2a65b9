package sim

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// RealEmergency is an EmergencySequencer that runs pkg/failover's Emergency,
// the operator's real step machine, through the sim's SiteOps and Status:
// the sim's Status stands for status.failover and friends, every
// PersistStatus writes into it. Fence confirmation stays the operator's
// (Input.FenceConfirmed), so the sequence is given no evidence of its own.
type RealEmergency struct {
	e    *failover.Emergency
	glue *emergencyGlue
}

// NewRealEmergency returns a RealEmergency for one run.
func NewRealEmergency() *RealEmergency {
	g := &emergencyGlue{}
	return &RealEmergency{glue: g, e: failover.NewEmergency(failover.Env{DB: g, Persister: g,
		Publisher: g, Notifier: g, Clock: g})}
}

// realAdoptionWait bounds the wait for the target's sidecar, as in the operator
// with the default peerCheckInterval.
const realAdoptionWait = 10 * time.Second

// Step implements EmergencySequencer.
func (r *RealEmergency) Step(c *Cycle) {
	r.glue.c = c
	p := failover.Pass{Group: groupOf(c), Input: c.Input, Decision: c.Decision,
		Evidence: func(site string) topology.Evidence { return topology.Evidence{Site: site, Active: site} },
		Sidecar:  func(site string) (int64, bool) { return c.SidecarGeneration(site), true },
		Settings: failover.Settings{DrainTimeout: c.Settings.DrainTimeout, AdoptionWait: realAdoptionWait}}
	if _, err := r.e.Advance(context.Background(), p); err != nil {
		c.Logf("emergency (pkg/failover): %v", err)
	}
}

// groupOf renders the sim's Status as a MysqlFailoverGroup.
func groupOf(c *Cycle) *v1alpha1.MysqlFailoverGroup {
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: simGroup, Namespace: simGroup}}
	s := c.Status
	st := &g.Status
	st.ActiveSite, st.TopologyGeneration = s.ActiveSite, s.Generation
	st.PromotionGtidExecuted = s.PromotionExecuted.String()
	for _, v := range c.Input.Sites {
		g.Spec.Sites = append(g.Spec.Sites, v1alpha1.Site{Name: v.Name, Role: v.Role})
		rec := v1alpha1.SiteStatus{Name: v.Name}
		if r := s.Site(v.Name); r != nil {
			rec.Fenced, rec.DivergentGtid = !r.MayBeWritable, r.Divergent.String()
		}
		st.Sites = append(st.Sites, rec)
	}
	if it := s.Intent; it != nil {
		st.Failover = &v1alpha1.FailoverIntent{From: it.From, To: it.To, Generation: it.Generation, Step: it.Step,
			StartTime: metav1.NewTime(it.StartedAt), FenceConfirmedBy: it.ConfirmedBy,
			SourceGtidExecuted: it.SourceExecuted.String()}
	}
	if n := len(s.History); n > 0 {
		h := s.History[n-1]
		st.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(h.Time), From: h.From, To: h.To, Kind: h.Kind}
	}
	return g
}

// emergencyGlue is the sequence's world in the sim: DB over SiteOps,
// Persister into Status, Publisher and Notifier into the trace.
type emergencyGlue struct {
	c *Cycle
	// promoted is the promotion not yet persisted: the site's executed set
	// and server uuid, which bound what any site may hold without diverging.
	promoted *SiteStatus
}

// PersistStatus implements failover.Persister.
func (g *emergencyGlue) PersistStatus(_ context.Context, grp *v1alpha1.MysqlFailoverGroup) error {
	s, st := g.c.Status, &grp.Status
	s.ActiveSite, s.Generation = st.ActiveSite, st.TopologyGeneration
	if p := g.promoted; p != nil {
		s.PromotionExecuted, s.ActiveSourceID = p.Executed, p.ServerUUID
		g.promoted = nil
	}
	switch it := st.Failover; {
	case it == nil && s.Intent != nil:
		lf := st.LastFailover
		s.History = append(s.History, topology.FailoverRecord{From: lf.From, To: lf.To, Generation: s.Intent.Generation,
			Time: lf.Time.Time, Kind: lf.Kind})
		g.c.Logf("emergency (pkg/failover): %s -> %s done, generation %d", lf.From, lf.To, s.Intent.Generation)
		s.Intent = nil
	case it != nil:
		g.persistIntent(it)
	}
	return nil
}

// PersistStatusExclusive implements failover.Persister: the sim's operator
// is the only writer of its Status, so nothing can conflict.
func (g *emergencyGlue) PersistStatusExclusive(ctx context.Context, grp *v1alpha1.MysqlFailoverGroup) error {
	return g.PersistStatus(ctx, grp)
}

func (g *emergencyGlue) persistIntent(it *v1alpha1.FailoverIntent) {
	s := g.c.Status
	cur := s.Intent
	if cur == nil || cur.Generation != it.Generation {
		src, _ := gtid.ParseSet(it.SourceGtidExecuted)
		cur = &Intent{From: it.From, To: it.To, Generation: it.Generation, StartedAt: g.c.Now, StepAt: g.c.Now,
			SourceExecuted: src}
		s.Intent = cur
		g.c.Logf("emergency (pkg/failover): intent %s -> %s published as generation %d", it.From, it.To, it.Generation)
	}
	if cur.Step != it.Step {
		cur.Step, cur.StepAt = it.Step, g.c.Now
		g.c.Logf("emergency (pkg/failover): %s -> %s step %s", it.From, it.To, it.Step)
	}
	if it.FenceConfirmedBy != "" {
		cur.ConfirmedBy = it.FenceConfirmedBy
	}
}

// Fence implements failover.DB.
func (g *emergencyGlue) Fence(_ context.Context, site string) error { return g.c.Ops.Fence(site) }

// DrainRelayLog implements failover.DB: drained when the executed set holds
// everything received; the sim does not block, the sequence retries.
func (g *emergencyGlue) DrainRelayLog(_ context.Context, site string, _ time.Duration) error {
	s, err := g.c.Ops.Status(site)
	if err != nil {
		return err
	}
	if !s.Executed.Contains(s.Received) {
		return failover.ErrDrainPending
	}
	return nil
}

// Promote implements failover.DB: STOP REPLICA and RESET, then writable.
func (g *emergencyGlue) Promote(_ context.Context, site string) (gtid.Set, error) {
	s, err := g.c.Ops.Status(site)
	if err != nil {
		return gtid.Set{}, err
	}
	if err := g.c.Ops.StopReplica(site); err != nil {
		return gtid.Set{}, err
	}
	if err := g.c.Ops.Unfence(site); err != nil {
		return gtid.Set{}, err
	}
	g.promoted = &s
	return s.Executed, nil
}

// ReplicateFrom implements failover.DB.
func (g *emergencyGlue) ReplicateFrom(_ context.Context, site, source string) error {
	return g.c.Ops.ReplicateFrom(site, source)
}

// Now tells the cycle's time: the glue is the sequences' clock.
func (g *emergencyGlue) Now() time.Time { return g.c.Now }

// Since implements clock.PassiveClock.
func (g *emergencyGlue) Since(t time.Time) time.Duration { return g.c.Now.Sub(t) }

// Publish implements failover.Publisher: the sim serves Status itself.
func (g *emergencyGlue) Publish(*v1alpha1.MysqlFailoverGroup) {}

// Event implements failover.Notifier.
func (g *emergencyGlue) Event(_ *v1alpha1.MysqlFailoverGroup, _, reason, message string) {
	g.c.Logf("event %s: %s", reason, message)
}

// FailoverCompleted implements failover.Notifier.
func (g *emergencyGlue) FailoverCompleted(*v1alpha1.MysqlFailoverGroup, v1alpha1.FailoverKind) {}

// DNSFlipped implements failover.Notifier.
func (g *emergencyGlue) DNSFlipped(*v1alpha1.MysqlFailoverGroup) {}

// errModelLeaseFence: the model sequencers arm no lease fence.
var errModelLeaseFence = errors.New("sim: the model sequencers arm no lease fence")

// ArmLeaseFence implements failover.DB. The model sequencer's passes name
// no sidecar asks (Pass.SidecarAskedAt nil), so it is never called; the
// real operator's runs arm through simInstance.
func (g *emergencyGlue) ArmLeaseFence(context.Context, string, time.Duration) error {
	return errModelLeaseFence
}
