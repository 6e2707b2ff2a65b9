package sidecar

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Settings are what the fencing decision depends on.
type Settings struct {
	Namespace string
	Group     string
	Site      string
	// LeaseTimeout is how long mysqld may stay writable without a contact
	// that renews the lease. It must be at least 3 × PeerCheckInterval, as
	// the CRD demands.
	LeaseTimeout time.Duration
	// PeerCheckInterval is the period of the fencing loop.
	PeerCheckInterval time.Duration
	// Keys verifies each view's signature (a *protocol.KeyRing, or a file
	// the runner re-reads). Required: a view that does not verify is never
	// adopted and renews nothing.
	Keys Verifier
	// Floor is the highest generation an earlier process of this sidecar
	// had seen (the runner keeps it in a file that survives a container
	// restart): a view below it is never adopted and renews nothing.
	Floor int64
}

// Verifier checks a view's signature; nil when it verifies.
// *protocol.KeyRing is one.
type Verifier interface {
	Verify(v1alpha1.ActiveSiteView) error
}

// Validate reports unusable settings, wrapping ErrInvalidSettings.
func (s Settings) Validate() error {
	switch {
	case s.Group == "" || s.Site == "":
		return fmt.Errorf("group %q site %q: both are required: %w", s.Group, s.Site, ErrInvalidSettings)
	case s.PeerCheckInterval <= 0:
		return fmt.Errorf("peerCheckInterval %s: must be positive: %w", s.PeerCheckInterval, ErrInvalidSettings)
	case s.LeaseTimeout < 3*s.PeerCheckInterval:
		return fmt.Errorf("leaseTimeout %s below 3 × peerCheckInterval %s: %w",
			s.LeaseTimeout, s.PeerCheckInterval, ErrInvalidSettings)
	case s.Keys == nil:
		return fmt.Errorf("no view keys: every view would be refused: %w", ErrInvalidSettings)
	}
	return nil
}

// DBState is what one tick saw of the local mysqld.
type DBState uint8

// The states of the local mysqld.
const (
	// DBUnknown: the status read failed in a way that does not prove mysqld
	// down (a timeout, an error answer). It may be writable, so the fencing
	// rules apply as if it were.
	DBUnknown DBState = iota
	// DBDown: mysqld is not running (socket missing, connection refused).
	DBDown
	// DBReadOnly: mysqld refuses application writes.
	DBReadOnly
	// DBWritable: mysqld accepts application writes.
	DBWritable
)

var dbStateNames = [...]string{DBUnknown: "unknown", DBDown: "down", DBReadOnly: "read-only", DBWritable: "writable"}

func (s DBState) String() string {
	if int(s) < len(dbStateNames) {
		return dbStateNames[s]
	}
	return fmt.Sprintf("DBState(%d)", s)
}

// mayWrite tells whether the fencing rules apply to a mysqld in this state.
func (s DBState) mayWrite() bool { return s == DBWritable || s == DBUnknown }

// Observation is everything one tick of the loop gathered.
type Observation struct {
	// Now is when the tick began gathering: the time every contact in it counts from.
	Now time.Time
	DB  DBState
	// Operator is the operator's answer to GET /active-site; the zero Reply
	// (ReplyNone) when it was not asked or did not answer.
	Operator Reply
	// Peers are the answers to GET /peer/active-site, one per peer asked.
	Peers []PeerReply
}

// Fence reasons, the values of the self_fences_total metric's reason label.
const (
	// ReasonView: the adopted view names another site.
	ReasonView = "view"
	// ReasonLease: no contact renewed the lease for LeaseTimeout.
	ReasonLease = "lease"
	// ReasonBoot: the sidecar started and the operator has not answered yet.
	ReasonBoot = "boot"
	// ReasonStop: the Pod is terminating (terminate.go).
	ReasonStop = "stop"
)

// Ignored is an answer the loop threw away: Err wraps ErrMalformed,
// ErrForeignView, ErrOlderView or a signature failure (ErrUnsigned,
// ErrUnknownKey, ErrBadSignature, ErrNoKeys of pkg/protocol); RejectReason
// names it for the metric.
type Ignored struct {
	// From is "operator" or "peer/<name>".
	From string
	Err  error
}

// Decision is what one tick decided.
type Decision struct {
	// Fence is true when mysqld must be fenced now, for Reason.
	Fence  bool
	Reason string
	// Adopted is true when this tick replaced the cached view; Changed when
	// the replacement names another active site or generation (or is the first).
	Adopted, Changed bool
	// Ignored lists the answers this tick threw away, to log and count.
	Ignored []Ignored
}

// Loop is the fencing decision of one sidecar: a state machine that never
// reads the clock, does no I/O and starts no goroutines. Its owner calls Tick
// once per peerCheckInterval with what it gathered, and acts on the Decision;
// during the gather it may Offer each answer as it arrives.
// A Loop is not safe for concurrent use.
type Loop struct {
	s Settings
	// view is the adopted view exactly as the operator signed it; source is
	// where this sidecar learned it ("operator" or "peer/<site>").
	view   v1alpha1.ActiveSiteView
	source string
	// hasView is false until a valid view has been heard.
	hasView bool
	// opView is the last valid view heard directly from the operator (zero
	// before any): reports echo its Operator and Seq (and ObservedAt).
	opView v1alpha1.ActiveSiteView
	bootAt time.Time
	// lastContact is the last contact that renewed the lease, zero before any.
	lastContact time.Time
	// awaitingOperator is true from boot until the operator's first valid view.
	awaitingOperator bool
	lastOperator     time.Time
	lastPeer         map[string]time.Time
}

// NewLoop starts the loop of a sidecar that boots at now: no view, lease
// counted from now, awaiting the operator.
func NewLoop(s Settings, now time.Time) (*Loop, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Loop{s: s, bootAt: now, awaitingOperator: true, lastPeer: map[string]time.Time{}}, nil
}

// Settings are the loop's settings.
func (l *Loop) Settings() Settings { return l.s }

// View is the cached view, exactly as signed; false before any valid view was heard.
func (l *Loop) View() (v1alpha1.ActiveSiteView, bool) { return l.view, l.hasView }

// Source is where the cached view was learned: "operator" or "peer/<site>".
func (l *Loop) Source() string { return l.source }

// Relay is the view to serve peers on /peer/active-site: the cached view,
// but only once the operator itself has answered since this process
// started. Before that this sidecar may hold only what a peer told it, and
// serving it back could renew a stale primary's lease (issue 13, path 1).
func (l *Loop) Relay() (v1alpha1.ActiveSiteView, bool) {
	if !l.hasView || l.awaitingOperator {
		return v1alpha1.ActiveSiteView{}, false
	}
	return l.view, true
}

// OperatorEcho is the last valid view heard directly from the operator as a
// report echoes it: its Operator, Seq and ObservedAt; empty before any. A
// report describes a mysqld read made after receiving it. Seq is never taken
// from a peer's relay: only the operator that stamped it reads it back.
func (l *Loop) OperatorEcho() Echo {
	return Echo{Operator: l.opView.Operator, Seq: l.opView.Seq, ObservedAt: l.opView.ObservedAt}
}

// Echo is what a report says of the operator's last view before its read.
type Echo struct {
	Operator string
	// Seq is the view's sequence number; zero from an operator before it.
	Seq int64
	// ObservedAt is sent for operators before Seq, which read only it.
	ObservedAt time.Time
}

// Floor is the lowest generation this loop may adopt: the highest it has
// seen, or the Settings' floor of an earlier process.
func (l *Loop) Floor() int64 {
	if l.hasView {
		return max(l.view.Generation, l.s.Floor)
	}
	return l.s.Floor
}

// Tick takes one tick's observation and decides.
func (l *Loop) Tick(o Observation) Decision {
	var d Decision
	l.hear(o.Now, "", o.Operator, &d)
	for _, p := range o.Peers {
		l.hear(o.Now, p.Peer, p.Reply, &d)
	}
	d.Fence, d.Reason = l.rule(o.Now, o.DB)
	return d
}

// Offer takes one answer as soon as it arrives, while the rest of the
// tick's gather is still out, so a newer view does not wait for a slower (or
// hung) request. It acts only on a valid view of this group that is newer
// than the cached one (or the first): it adopts the view exactly as Tick
// would, renewing the lease from now (the tick's start, as in Tick), and
// decides a view fence when the view names another site and mysqld may
// write. Anything else (an older or equal view, no answer, a malformed or
// foreign one) changes nothing and is left to Tick, which lists and counts
// it. The owner still calls Tick with every answer once the gather ends;
// hearing an adopted answer again there is a no-op, so Tick's Decision
// reports neither the adoption nor, when the owner passes the DBState the
// fence left behind (read-only), the fence again.
func (l *Loop) Offer(now time.Time, peer string, r Reply, db DBState) Decision {
	var d Decision
	if r.Kind != ReplyView || l.check(r.View) != nil || (l.hasView && !r.View.Newer(l.view)) {
		return d
	}
	l.hear(now, peer, r, &d)
	if l.view.ActiveSite != l.s.Site && db.mayWrite() {
		d.Fence, d.Reason = true, ReasonView
	}
	return d
}

// Check decides without anything heard: the runner calls it when the lease
// runs out between ticks, so the lease fence does not wait for a gather.
func (l *Loop) Check(now time.Time, db DBState) Decision {
	var d Decision
	d.Fence, d.Reason = l.rule(now, db)
	return d
}

// hear takes one answer, from the operator when peer is "": a valid view
// renews the lease and is adopted when newer; a bad one is listed in
// d.Ignored; no answer changes nothing.
func (l *Loop) hear(now time.Time, peer string, r Reply, d *Decision) {
	from := targetName(peer)
	if r.Kind != ReplyView {
		if r.Kind == ReplyMalformed {
			d.Ignored = append(d.Ignored, Ignored{From: from, Err: r.Err})
		}
		return
	}
	if err := l.check(r.View); err != nil {
		d.Ignored = append(d.Ignored, Ignored{From: from, Err: err})
		return
	}
	l.lastContact = later(l.lastContact, now)
	if peer == "" {
		l.lastOperator, l.awaitingOperator = later(l.lastOperator, now), false
		if laterServed(l.opView, r.View) {
			l.opView = r.View
		}
	} else {
		l.lastPeer[peer] = later(l.lastPeer[peer], now)
	}
	if !l.hasView || r.View.Newer(l.view) {
		d.Changed = d.Changed || !l.hasView || r.View.Generation != l.view.Generation || r.View.ActiveSite != l.view.ActiveSite
		l.view, l.source, l.hasView, d.Adopted = r.View, from, true, true
	}
}

// check validates a view: well formed, of this sidecar's group, signed with
// an accepted key, and not older than the floor (the cached view's
// generation, or an earlier process's). Only a view that passes renews the
// lease; a forged one, however high its generation, changes nothing.
func (l *Loop) check(v v1alpha1.ActiveSiteView) error {
	switch {
	case v.Group == "" || v.ActiveSite == "" || v.Generation < 1:
		return fmt.Errorf("group %q active site %q generation %d: %w", v.Group, v.ActiveSite, v.Generation, ErrMalformed)
	case v.Group != l.s.Group || (v.Namespace != "" && l.s.Namespace != "" && v.Namespace != l.s.Namespace):
		return fmt.Errorf("view of %s/%s, this sidecar is in %s/%s: %w", v.Namespace, v.Group, l.s.Namespace, l.s.Group, ErrForeignView)
	}
	if err := l.s.Keys.Verify(v); err != nil {
		return fmt.Errorf("view of generation %d naming %q: %w", v.Generation, v.ActiveSite, err)
	}
	if floor := l.Floor(); v.Generation < floor {
		return fmt.Errorf("generation %d below %d: %w", v.Generation, floor, ErrOlderView)
	}
	return nil
}

// rule is the fencing rule. A mysqld that cannot write needs nothing; the
// loop never unfences.
func (l *Loop) rule(now time.Time, db DBState) (bool, string) {
	if !db.mayWrite() {
		return false, ""
	}
	switch {
	case l.hasView && l.view.ActiveSite != l.s.Site:
		return true, ReasonView
	case l.awaitingOperator:
		return true, ReasonBoot
	case l.LeaseRemaining(now) <= 0:
		return true, ReasonLease
	}
	return false, ""
}

// LeaseRemaining is how long until the lease runs out at now (negative once it has).
func (l *Loop) LeaseRemaining(now time.Time) time.Duration { return l.LeaseDeadline().Sub(now) }

// LeaseDeadline is when the lease runs out unless renewed: the last contact,
// or the boot when there was none yet, plus LeaseTimeout.
func (l *Loop) LeaseDeadline() time.Time { return later(l.bootAt, l.lastContact).Add(l.s.LeaseTimeout) }

// State is a snapshot of the loop for /status.
type State struct {
	View    v1alpha1.ActiveSiteView
	HasView bool
	// Source is where View was learned: "operator" or "peer/<site>".
	Source string
	// AwaitingOperator is true until the operator has answered once since boot.
	AwaitingOperator bool
	BootAt           time.Time
	// LastContact is the last contact that renewed the lease (zero before any).
	LastContact  time.Time
	LastOperator time.Time
	LastPeer     map[string]time.Time
}

// State returns a snapshot; the map is a copy.
func (l *Loop) State() State {
	st := State{View: l.view, HasView: l.hasView, Source: l.source, AwaitingOperator: l.awaitingOperator, BootAt: l.bootAt,
		LastContact: l.lastContact, LastOperator: l.lastOperator, LastPeer: make(map[string]time.Time, len(l.lastPeer))}
	for k, v := range l.lastPeer {
		st.LastPeer[k] = v
	}
	return st
}

// targetName names where an answer came from: "operator" for peer "", else "peer/<peer>".
func targetName(peer string) string {
	if peer == "" {
		return v1alpha1.SourceOperator
	}
	return v1alpha1.SourcePeerPrefix + peer
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// laterServed reports whether the operator served v after cur, the view it
// replaces as the one a report echoes: another operator process's view
// always replaces it; the same process's, by its sequence number when both
// carry one (the operator's wall clock may step back), or else by
// observedAt (an operator from before sequence numbers).
func laterServed(cur, v v1alpha1.ActiveSiteView) bool {
	switch {
	case cur.Operator != v.Operator:
		return true
	case cur.Seq > 0 && v.Seq > 0:
		return v.Seq >= cur.Seq
	}
	return !cur.ObservedAt.After(v.ObservedAt)
}
