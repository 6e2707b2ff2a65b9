package failover

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Outcome says where Advance stopped.
type Outcome struct {
	// Started is true when this pass persisted a new intent.
	Started bool
	// Completed is true when this pass finished the failover.
	Completed bool
	// Step is the persisted step Advance stopped at; empty when no failover is in flight.
	Step v1alpha1.FailoverStep
	// Waiting says what the failover waits for; empty unless it stopped early.
	Waiting string
}

// Emergency runs one group's emergency failovers. It is used by one
// goroutine at a time (the group's poll loop). Its memory only bounds waits;
// everything that matters for safety is in the persisted status.
type Emergency struct {
	env Env
	// stepSeen is the step in flight and when this operator first saw it:
	// the drain and sidecar-adoption budgets count from there.
	stepKey  string
	stepSeen time.Time
	// salvageM is the binlog salvage of the failover in flight (salvage.go).
	salvageM salvageMemo
	// lostRelay names relay logs found short of what their site's probe
	// showed received (received.go).
	lostRelay receivedLost
	// drainSite ("generation/target") and drainW watch a slow drain of
	// that target past its drain timeout (received.go, topology.JudgeDrain).
	drainSite string
	drainW    topology.DrainWatch
}

// NewEmergency returns the sequence acting through env.
func NewEmergency(env Env) *Emergency {
	return &Emergency{env: env}
}

// Advance begins a failover when the pass's decision asks for one
// (Decision.Start), begins it anew toward the decision's target when the
// decision retargets the one in flight (Decision.Retarget), or resumes the
// one persisted in status.failover, and runs its steps until it
// completes or must wait for new evidence. Each step is persisted before the
// next one runs. An error leaves the last persisted step to be retried.
func (e *Emergency) Advance(ctx context.Context, p Pass) (Outcome, error) {
	p.Settings = p.Settings.withDefaults()
	st := &p.Group.Status
	var out Outcome
	switch {
	case st.Failover == nil && !p.Decision.Start:
		return out, nil
	case st.Failover == nil:
		if err := e.begin(ctx, p, st.ActiveSite, p.Decision.Target, nil); err != nil {
			return out, err
		}
		out.Started = true
	case p.Decision.Retarget:
		if err := e.begin(ctx, p, st.Failover.From, p.Decision.Target, p.Decision.Abandon); err != nil {
			return out, err
		}
		out.Started = true
	}
	gated := false
	for st.Failover != nil {
		it := st.Failover
		e.observeStep(it)
		wait, err := e.step(ctx, p, it, &gated)
		out.Step = stepOf(st)
		if err != nil || wait != "" {
			out.Waiting = wait
			return out, err
		}
	}
	out.Completed = true
	return out, nil
}

func stepOf(st *v1alpha1.MysqlFailoverGroupStatus) v1alpha1.FailoverStep {
	if st.Failover == nil {
		return ""
	}
	return st.Failover.Step
}

func (e *Emergency) observeStep(it *v1alpha1.FailoverIntent) {
	key := fmt.Sprintf("%d/%s", it.Generation, it.Step)
	if key != e.stepKey {
		e.stepKey, e.stepSeen = key, e.env.Clock.Now()
	}
}

func (e *Emergency) step(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent, gated *bool) (string, error) {
	switch it.Step {
	case v1alpha1.StepIntent:
		return "", e.publish(ctx, p, it)
	case v1alpha1.StepFencing:
		return e.fence(ctx, p, it, gated)
	case v1alpha1.StepPromoting:
		return e.promote(ctx, p, it, *gated)
	case v1alpha1.StepRouting:
		return "", e.route(ctx, p, it)
	case v1alpha1.StepRepointing:
		return "", e.repoint(ctx, p, it)
	}
	return "", fmt.Errorf("failover %s->%s: step %q: %w", it.From, it.To, it.Step, ErrUnknownStep)
}

// begin persists a new intent: the next generation, naming the target active.
// abandoned are the earlier targets a retarget leaves behind that may have
// written (topology.Decision.Abandon).
func (e *Emergency) begin(ctx context.Context, p Pass, from, to string, abandoned []string) error {
	if to == "" {
		return ErrNoTarget
	}
	if _, ok := p.Input.Site(to); !ok {
		return fmt.Errorf("failover to %s: %w", to, ErrUnknownSite)
	}
	st := &p.Group.Status
	now := e.env.Clock.Now()
	src, _ := p.Input.Site(from)
	var receivedLost string // a retarget keeps what the earlier targets gave up
	if st.Failover != nil {
		receivedLost = st.Failover.ReceivedLostGtidSet
	}
	st.TopologyGeneration++
	st.ActiveSite = to
	st.Failover = &v1alpha1.FailoverIntent{From: from, To: to, Generation: st.TopologyGeneration,
		Step: v1alpha1.StepIntent, StartTime: metav1.NewTime(now).Rfc3339Copy(), Abandoned: slices.Clone(abandoned),
		ReceivedLostGtidSet: receivedLost}
	if len(abandoned) > 0 && !p.Decision.AbandonedWrote.IsEmpty() {
		// What the sites listed before wrote stays known: the new target
		// adds nothing to it by its own reads (topology.abandonedKnown).
		st.Failover.AbandonedGtidSet = p.Decision.AbandonedWrote.String()
	}
	if !src.Executed.IsEmpty() {
		st.Failover.SourceGtidExecuted = src.Executed.String()
	}
	if err := e.persist(ctx, p); err != nil {
		return err
	}
	e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventFailoverStarted,
		fmt.Sprintf("emergency failover %s -> %s, generation %d: %s", from, to, st.TopologyGeneration, p.Decision.Message))
	return nil
}

// publish serves the persisted intent on /active-site, then moves to Fencing.
func (e *Emergency) publish(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) error {
	e.env.Publisher.Publish(p.Group)
	it.Step = v1alpha1.StepFencing
	return e.persist(ctx, p)
}

// persist writes the group's status. The Persister may replace what the
// group's fields point to (it decodes the server's answer into the group,
// or re-reads it after a conflict); the intent keeps its identity here, so
// that a step holding it across writes goes on changing the group's intent
// (as Planned.persist does for its block).
func (e *Emergency) persist(ctx context.Context, p Pass) error {
	return e.persistWith(ctx, p, e.env.Persister.PersistStatus)
}

// persistWith is persist through write: PersistStatus, or
// PersistStatusExclusive for a claim.
func (e *Emergency) persistWith(ctx context.Context, p Pass,
	write func(context.Context, *v1alpha1.MysqlFailoverGroup) error) error {
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	st := &p.Group.Status
	held := st.Failover
	err := write(cctx, p.Group)
	if now := st.Failover; held != nil && now != nil && now != held {
		*held = *now
		st.Failover = held
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPersist, err)
	}
	return nil
}

func (e *Emergency) call(ctx context.Context, p Pass) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.Settings.CallTimeout)
}
