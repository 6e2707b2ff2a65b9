package failover

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// PlannedDB is what a planned failover does to the sites' mysqld beyond the
// emergency sequence's verbs. Every call must end by its context's deadline.
type PlannedDB interface {
	DB
	// Unfence makes site writable again: the rollback of a planned failover's fence.
	Unfence(ctx context.Context, site string) error
	// KillAppConnections kills site's application sessions and says how many it killed.
	KillAppConnections(ctx context.Context, site string) (int, error)
	// WaitForGTID waits up to timeout until site has applied set. It returns
	// an error wrapping ErrLagPending when the time ran out first.
	WaitForGTID(ctx context.Context, site string, set gtid.Set, timeout time.Duration) error
	// Executed reads site's executed GTID set now.
	Executed(ctx context.Context, site string) (gtid.Set, error)
	// CheckReplica returns nil when site receives its source's transactions:
	// replication is configured, its IO thread was not stopped, and no thread
	// stopped on an error. An SQL thread paused without an error is lag,
	// which WaitingForLag bounds, and passes. Otherwise the error wraps
	// ErrNotReplicating and says why.
	CheckReplica(ctx context.Context, site string) error
}

// Annotator answers requests: it removes the planned-failover annotation.
type Annotator interface {
	// ClearPlannedRequest removes the annotation from g's object when its
	// value is still value; a different value (a new request) stays. It
	// does not modify g.
	ClearPlannedRequest(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, value string) error
}

// PlannedNotifier is Notifier plus the planned failover's metrics.
type PlannedNotifier interface {
	Notifier
	// PlannedFinished counts a request that ended with result (a
	// PlannedResult* value) and, for a success, observes how long it took.
	// target is "" when the request named no site of the group.
	PlannedFinished(g *v1alpha1.MysqlFailoverGroup, target, result string, took time.Duration)
	// PlannedLagWaited observes how long WaitingForLag lasted.
	PlannedLagWaited(g *v1alpha1.MysqlFailoverGroup, target string, waited time.Duration)
}

// Results of a planned failover, the values of the result metric label.
const (
	PlannedResultSuccess       = "success"
	PlannedResultRejected      = "rejected"
	PlannedResultFailedTimeout = "failed_timeout"
	PlannedResultFailedOther   = "failed_other"
)

// PlannedEnv is everything Planned acts through. Router and Annotator may be
// nil (the simulation has neither Pods nor annotations to change).
type PlannedEnv struct {
	DB        PlannedDB
	Router    Router
	Persister Persister
	Publisher Publisher
	Notifier  PlannedNotifier
	Annotator Annotator
	Clock     clock.PassiveClock
	// Cache and CacheRouter act on the sites' caches (Dragonfly). With
	// Cache nil the Dragonfly phases are skipped (counted skipped);
	// CacheRouter nil moves no traffic label.
	Cache       Cache
	CacheRouter CacheRouter
}

// PlannedOutcome says what Step did.
type PlannedOutcome struct {
	// Acted is true when Step used the pass's one topology operation; when
	// false the pass is the rest of the loop's.
	Acted bool
	// Phase is the phase status.plannedFailover holds after Step.
	Phase v1alpha1.PlannedFailoverPhase
	// Next is how soon the next pass should run: 0 means at once. Negative
	// means no sooner than the poll interval.
	Next time.Duration
	// Waiting says what the phase waits for; empty when it moved on.
	Waiting string
}

// Waits between passes of a planned failover that waits on something.
const (
	// lagSlice bounds one WaitForGTID call, so a pass never blocks long.
	lagSlice = 250 * time.Millisecond
	// retryPause paces retries of a phase whose call failed.
	retryPause = 200 * time.Millisecond
	// adoptionPoll paces the wait for the target's sidecar.
	adoptionPoll = 50 * time.Millisecond
	// relayDrain bounds the relay-log drain before the target is promoted.
	relayDrain = time.Second
)

// Planned runs one group's planned failovers: the state machine behind the
// planned-failover annotation. Each Step runs at most one phase and persists
// its result in status.plannedFailover before returning. Like Emergency it is
// used by one goroutine at a time, and its memory only sharpens timings:
// everything that matters is in the persisted status.
type Planned struct {
	env PlannedEnv
	// began and entered are when this operator started the request and
	// entered the phase in flight, to the nanosecond (status keeps seconds).
	began, entered memo
}

// memo is a time remembered for one request or phase.
type memo struct {
	key string
	at  time.Time
}

// NewPlanned returns the state machine acting through env.
func NewPlanned(env PlannedEnv) *Planned { return &Planned{env: env} }

// plannedStep is one phase's handler.
type plannedStep func(m *Planned, ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error)

var plannedSteps = map[v1alpha1.PlannedFailoverPhase]plannedStep{
	v1alpha1.PhasePending:       (*Planned).pending,
	v1alpha1.PhaseValidating:    (*Planned).validating,
	v1alpha1.PhaseDeferred:      (*Planned).deferred,
	v1alpha1.PhaseDraining:      (*Planned).draining,
	v1alpha1.PhaseWaitingForLag: (*Planned).waitingForLag,
	// The cache's phases (planned_cache.go); skipped without Dragonfly.
	v1alpha1.PhaseWaitingForDragonflySync: (*Planned).waitingForCacheSync,
	v1alpha1.PhasePromotingDragonfly:      (*Planned).promotingCache,
	v1alpha1.PhasePromoting:               (*Planned).promoting,
	v1alpha1.PhaseResuming:                (*Planned).resuming,
}

// Step runs the next phase of the group's planned failover: it starts a
// request when the annotation holds one that status.plannedFailover has not
// answered, or advances the request in flight by one phase. It does nothing
// (Acted false) when there is no request, or when a Deferred request is not
// due yet. An error leaves the persisted phase to be retried.
func (m *Planned) Step(ctx context.Context, p Pass) (PlannedOutcome, error) {
	p.Settings = p.Settings.withDefaults()
	b := p.Group.Status.PlannedFailover
	if b == nil || b.Phase.Terminal() || b.Phase == "" {
		value, ok := p.Group.Annotations[v1alpha1.PlannedFailoverAnnotation]
		if !ok {
			if b != nil && b.Phase == v1alpha1.PhaseSucceeded && b.Reason == v1alpha1.ReasonDNSFlipFailed {
				m.retryDNS(ctx, p, b)
			}
			return PlannedOutcome{Next: -1}, nil
		}
		out, err := m.begin(ctx, p, value, "")
		out.Phase = v1alpha1.PhasePending
		return out, err
	}
	step, ok := plannedSteps[b.Phase]
	if !ok {
		return PlannedOutcome{Next: -1}, fmt.Errorf("planned failover: phase %q: %w", b.Phase, ErrUnknownPhase)
	}
	out, err := step(m, ctx, p, b)
	out.Phase = p.Group.Status.PlannedFailover.Phase
	return out, err
}

// Requested reports whether g asks for a planned failover that Step would
// take up: the annotation holds a request not yet answered, or a request is
// in flight (Deferred included).
func Requested(g *v1alpha1.MysqlFailoverGroup) bool {
	b := g.Status.PlannedFailover
	if b != nil && b.Phase != "" && !b.Phase.Terminal() {
		return true
	}
	_, ok := g.Annotations[v1alpha1.PlannedFailoverAnnotation]
	return ok
}

// PlannedHolds reports whether a planned failover in phase holds the
// topology: from Draining (the source is about to be fenced) until Resuming
// ends. Automatic evaluation pauses meanwhile. Pending, Validating and
// Deferred change nothing and hold nothing.
func PlannedHolds(phase v1alpha1.PlannedFailoverPhase) bool {
	switch phase {
	case v1alpha1.PhaseDraining, v1alpha1.PhaseWaitingForLag, v1alpha1.PhaseWaitingForDragonflySync,
		v1alpha1.PhasePromotingDragonfly, v1alpha1.PhasePromoting, v1alpha1.PhaseResuming:
		return true
	}
	return false
}

// begin starts a new request: a Pending block naming the annotation's
// value, or the ordered update's (origin update, planned_update.go).
func (m *Planned) begin(ctx context.Context, p Pass, value string, origin v1alpha1.PlannedOrigin) (PlannedOutcome, error) {
	st := &p.Group.Status
	now := m.env.Clock.Now()
	b := &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhasePending, Request: value, Origin: origin,
		SourcePrimary: st.ActiveSite, Message: "request observed"}
	if p.Group.Spec.Dragonfly.Enabled {
		b.Dragonfly = &v1alpha1.DragonflyPromotionStatus{Enabled: true}
	}
	start := stamp(now)
	b.StartTime, b.PhaseStartTime = &start, &start
	st.PlannedFailover = b
	if err := m.persist(ctx, p); err != nil {
		return PlannedOutcome{Acted: true, Next: retryPause}, err
	}
	m.began = memo{key: requestKey(b), at: now}
	m.entered = memo{key: phaseKey(b), at: now}
	m.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventPlannedFailoverStarted,
		fmt.Sprintf("planned failover requested: %q (active site %s)", value, st.ActiveSite))
	return PlannedOutcome{Acted: true}, nil
}

// enter moves b to phase with a message; the caller persists.
func (m *Planned) enter(b *v1alpha1.PlannedFailoverStatus, phase v1alpha1.PlannedFailoverPhase, msg string) {
	now := m.env.Clock.Now()
	at := stamp(now)
	b.Phase, b.PhaseStartTime, b.Message = phase, &at, msg
	m.entered = memo{key: phaseKey(b), at: now}
}

// advance enters phase and persists it; the next pass runs at once.
func (m *Planned) advance(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus,
	phase v1alpha1.PlannedFailoverPhase, msg string) (PlannedOutcome, error) {
	m.enter(b, phase, msg)
	if err := m.persist(ctx, p); err != nil {
		return PlannedOutcome{Acted: true, Next: retryPause}, err
	}
	return PlannedOutcome{Acted: true}, nil
}

// inPhase is how long b has been in its phase: from this operator's own
// entry when it made it, else from the persisted (whole-second) stamp.
func (m *Planned) inPhase(b *v1alpha1.PlannedFailoverStatus) time.Duration {
	now := m.env.Clock.Now()
	if m.entered.key == phaseKey(b) && b.PhaseStartTime != nil && stamp(m.entered.at).Time.Equal(b.PhaseStartTime.Time) {
		return now.Sub(m.entered.at)
	}
	if b.PhaseStartTime == nil {
		return 0
	}
	return now.Sub(b.PhaseStartTime.Time)
}

// took is how long the request has run, measured as inPhase is.
func (m *Planned) took(b *v1alpha1.PlannedFailoverStatus) time.Duration {
	now := m.env.Clock.Now()
	if m.began.key == requestKey(b) {
		return now.Sub(m.began.at)
	}
	if b.StartTime == nil {
		return 0
	}
	return now.Sub(b.StartTime.Time)
}

func requestKey(b *v1alpha1.PlannedFailoverStatus) string {
	var start time.Time
	if b.StartTime != nil {
		start = b.StartTime.Time
	}
	return start.UTC().Format(time.RFC3339) + "|" + b.Request
}

func phaseKey(b *v1alpha1.PlannedFailoverStatus) string {
	return requestKey(b) + "|" + string(b.Phase)
}

// persist writes the group's status. The Persister may replace what the
// group's fields point to (it decodes the server's answer into the group,
// or re-reads it after a conflict); the block keeps its identity here, so
// that a phase holding it goes on changing the group's block.
func (m *Planned) persist(ctx context.Context, p Pass) error {
	return m.persistWith(ctx, p, m.env.Persister.PersistStatus)
}

// claim marks site maybe-writable and persists that exclusively (claim.go):
// only on nil may the caller make site writable.
func (m *Planned) claim(ctx context.Context, p Pass, site string) (Claimed, error) {
	c := claim(&p.Group.Status, site)
	if err := m.persistWith(ctx, p, m.env.Persister.PersistStatusExclusive); err != nil {
		return c, fmt.Errorf("%w %s: %w", ErrClaim, site, err)
	}
	return c, nil
}

// withdraw withdraws claim c, whose statement was never sent, and persists
// that (claim.go): err is why the statement was not sent.
func (m *Planned) withdraw(ctx context.Context, p Pass, c Claimed, err error) error {
	if werr := withdrawWith(&p.Group.Status, c, func() error {
		return m.persistWith(ctx, p, m.env.Persister.PersistStatusExclusive)
	}); werr != nil {
		return fmt.Errorf("%w (%w)", err, werr)
	}
	return err
}

// persistWith is persist through write: PersistStatus, or
// PersistStatusExclusive for a claim.
func (m *Planned) persistWith(ctx context.Context, p Pass,
	write func(context.Context, *v1alpha1.MysqlFailoverGroup) error) error {
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	st := &p.Group.Status
	held := st.PlannedFailover
	err := write(cctx, p.Group)
	if now := st.PlannedFailover; held != nil && now != nil && now != held {
		*held = *now
		st.PlannedFailover = held
	}
	if err != nil {
		return fmt.Errorf("%w: planned failover: %w", ErrPersist, err)
	}
	return nil
}

func (m *Planned) call(ctx context.Context, p Pass) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.Settings.CallTimeout)
}

// stamp is a status time (whole seconds, as the API server keeps them).
func stamp(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }

// waiting is the outcome of a pass that waits: the phase stays, the next
// pass runs after next.
func waiting(next time.Duration, why string) PlannedOutcome {
	return PlannedOutcome{Acted: true, Next: next, Waiting: why}
}
