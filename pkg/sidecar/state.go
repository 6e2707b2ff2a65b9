package sidecar

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// contact is the last exchange with the operator or one peer.
type contact struct {
	target, url string
	kind        ReplyKind
	err         error
	answeredAt  time.Time // last HTTP answer of any kind
	asked       bool
	// ignored is the last ignored answer's error, "" once an answer is taken.
	ignored string
}

// runnerState is what the Runner remembers beside the Loop, for /status,
// /readyz and the logs.
type runnerState struct {
	db              DBState
	dbErr           error
	dbAt            time.Time
	operator        contact
	peers           []contact // in Config.Peers order
	lastFence       time.Time
	lastFenceReason string
	fenceErr        error
	// leaseFenceErr is why the last arm of mysqld's lease fence failed, nil
	// when it held (leasefence.go).
	leaseFenceErr error
}

func newRunnerState(cfg Config) runnerState {
	st := runnerState{operator: contact{target: targetName(""), url: cfg.OperatorURL}}
	for _, p := range cfg.Peers {
		st.peers = append(st.peers, contact{target: targetName(p.Name), url: p.URL})
	}
	return st
}

func (st *runnerState) noteFence(at time.Time, reason string, err error) {
	st.fenceErr = err
	if err == nil {
		st.lastFence, st.lastFenceReason = at, reason
	}
}

// note records a reply and reports whether its kind changed since the last one.
func (c *contact) note(now time.Time, r Reply) bool {
	changed := !c.asked || c.kind != r.Kind
	c.asked, c.kind, c.err = true, r.Kind, r.Err
	if r.Kind != ReplyNone {
		c.answeredAt = now
	}
	return changed
}

// record keeps the tick's replies for /status, counts and logs failed
// contacts, ignored answers and adoptions.
func (r *Runner) record(obs Observation, d Decision, gen int64, active, source string) {
	type change struct {
		target string
		reply  Reply
	}
	var changes []change
	r.mu.Lock()
	if r.st.operator.note(obs.Now, obs.Operator) {
		changes = append(changes, change{r.st.operator.target, obs.Operator})
	}
	for i, p := range obs.Peers {
		if i < len(r.st.peers) && r.st.peers[i].note(obs.Now, p.Reply) {
			changes = append(changes, change{r.st.peers[i].target, p.Reply})
		}
	}
	newIgnored := r.st.noteIgnored(d.Ignored)
	r.mu.Unlock()
	for _, c := range changes {
		r.logReplyChange(c.target, c.reply)
	}
	if obs.Operator.Kind == ReplyNone {
		r.metrics.contactError(targetName(""), obs.Operator.Err)
		r.metrics.untrusted(obs.Operator.Err)
	}
	for _, p := range obs.Peers {
		if p.Kind == ReplyNone {
			r.metrics.contactError(targetName(p.Peer), p.Err)
			r.metrics.untrusted(p.Err)
		}
	}
	for _, ig := range d.Ignored {
		r.metrics.contactError(ig.From, ig.Err)
		if reason := RejectReason(ig.Err); reason != "" {
			r.metrics.rejectedViews.WithLabelValues(reason).Inc()
		}
	}
	for _, ig := range newIgnored {
		r.log.Warn("ignored reply (logged again only when it changes)", "from", ig.From, "error", ig.Err)
	}
	if d.Changed {
		r.log.Info("adopted view", "activeSite", active, "generation", gen, "source", source)
	}
}

// noteIgnored remembers this tick's ignored answers per contact and returns
// those that differ from the contact's last one. A contact whose answer was
// not ignored this tick forgets its last one.
func (st *runnerState) noteIgnored(ignored []Ignored) []Ignored {
	var fresh []Ignored
	seen := map[*contact]bool{}
	for _, ig := range ignored {
		c := st.contact(ig.From)
		if c == nil {
			continue
		}
		seen[c] = true
		// Keyed by the reason, not the message: a forger that varies what it
		// sends does not get a log line per answer.
		msg := RejectReason(ig.Err)
		if msg == "" {
			msg = ig.Err.Error()
		}
		if msg != c.ignored {
			c.ignored = msg
			fresh = append(fresh, ig)
		}
	}
	for _, c := range st.all() {
		if !seen[c] {
			c.ignored = ""
		}
	}
	return fresh
}

func (st *runnerState) all() []*contact {
	out := []*contact{&st.operator}
	for i := range st.peers {
		out = append(out, &st.peers[i])
	}
	return out
}

func (st *runnerState) contact(target string) *contact {
	for _, c := range st.all() {
		if c.target == target {
			return c
		}
	}
	return nil
}

func (r *Runner) logReplyChange(target string, rep Reply) {
	switch rep.Kind {
	case ReplyView:
		r.log.Info("contact answers with a view", "target", target)
	case ReplyTooOld:
		r.log.Info("peer predates /peer/active-site; relying on the operator alone", "target", target)
	case ReplyNoView:
		r.log.Info("peer holds no view yet", "target", target)
	case ReplyNone:
		r.log.Warn("contact lost", "target", target, "error", rep.Err)
	}
}

// StatusReport is the body of GET /status.
type StatusReport struct {
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Site      string `json:"site"`
	// MySQLD is writable, read-only, down or unknown, as the last read saw it.
	MySQLD      string    `json:"mysqld"`
	MySQLDError string    `json:"mysqldError,omitempty"`
	MySQLDAt    time.Time `json:"mysqldAt"`
	// Fenced is true when mysqld refuses application writes.
	Fenced bool `json:"fenced"`
	// AwaitingOperator is true from boot until the operator answered once.
	AwaitingOperator      bool    `json:"awaitingOperator"`
	LeaseRemainingSeconds float64 `json:"leaseRemainingSeconds"`
	LeaseTimeout          string  `json:"leaseTimeout"`
	PeerCheckInterval     string  `json:"peerCheckInterval"`
	// View is the cached view exactly as the operator signed it, absent
	// before any; ViewSource is where this sidecar learned it.
	View       *v1alpha1.ActiveSiteView `json:"view,omitempty"`
	ViewSource string                   `json:"viewSource,omitempty"`
	// Boot is this process's random id, sent in its reports.
	Boot string `json:"boot"`
	// ExecutableHash is the SHA-256 (hex) of this process's binary, sent
	// in its reports; absent when unknown.
	ExecutableHash string `json:"executableHash,omitempty"`
	// HandedOver is true when this process took its state over from the
	// process that re-executed it (an in-place upgrade or restart).
	HandedOver bool `json:"handedOver,omitempty"`
	// ViewKeys are the ids of the accepted public view keys (from the key
	// file; empty when the keys were given in code).
	ViewKeys []string `json:"viewKeys,omitempty"`
	// LastContact is the last contact that renewed the lease.
	LastContact *time.Time      `json:"lastContact,omitempty"`
	BootAt      time.Time       `json:"bootAt"`
	Operator    ContactReport   `json:"operator"`
	Peers       []ContactReport `json:"peers"`
	LastFence   *FenceReport    `json:"lastFence,omitempty"`
	FenceError  string          `json:"fenceError,omitempty"`
	// LeaseFenceError is why the last arm of mysqld's lease fence failed.
	LeaseFenceError string `json:"leaseFenceError,omitempty"`
	// MySQLDStop is the last time a fence escalated to stopping mysqld.
	MySQLDStop *StopReport `json:"mysqldStop,omitempty"`
	// WriteHoldSince is when the sidecar took the global read lock that
	// keeps every account from writing on its fenced mysqld; absent when
	// it holds none.
	WriteHoldSince *time.Time `json:"writeHoldSince,omitempty"`
	// Termination is the Pod's termination once it began (terminate.go).
	Termination *TerminationReport `json:"termination,omitempty"`
}

// ContactReport is the state of the link to the operator or one peer.
type ContactReport struct {
	// Target is "operator" or "peer/<site>".
	Target string `json:"target"`
	URL    string `json:"url"`
	// LastContact is the last valid view it gave.
	LastContact *time.Time `json:"lastContact,omitempty"`
	// LastReply is the kind of the last reply: view, none, no-view, too-old or malformed.
	LastReply  string     `json:"lastReply,omitempty"`
	LastError  string     `json:"lastError,omitempty"`
	AnsweredAt *time.Time `json:"answeredAt,omitempty"`
}

// FenceReport is the last self-fence.
type FenceReport struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Status is a snapshot of the sidecar, as GET /status serves it.
func (r *Runner) Status() StatusReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Clock.Now()
	ls := r.loop.State()
	rep := StatusReport{Namespace: r.cfg.Namespace, Group: r.cfg.Group, Site: r.cfg.Site,
		MySQLD: r.st.db.String(), MySQLDAt: r.st.dbAt, Fenced: r.st.db == DBReadOnly,
		AwaitingOperator: ls.AwaitingOperator, LeaseRemainingSeconds: r.loop.LeaseRemaining(now).Seconds(),
		LeaseTimeout: r.cfg.LeaseTimeout.String(), PeerCheckInterval: r.cfg.PeerCheckInterval.String(),
		LastContact: timePtr(ls.LastContact), BootAt: ls.BootAt, Peers: []ContactReport{}}
	if r.st.dbErr != nil {
		rep.MySQLDError = r.st.dbErr.Error()
	}
	if r.st.leaseFenceErr != nil {
		rep.LeaseFenceError = r.st.leaseFenceErr.Error()
	}
	if ls.HasView {
		v := ls.View
		rep.View, rep.ViewSource = &v, ls.Source
	}
	rep.Boot, rep.ExecutableHash, rep.HandedOver = r.boot, r.cfg.ExecutableHash, r.handedOver
	if r.keys != nil {
		rep.ViewKeys = r.keys.IDs()
	}
	rep.Operator = r.st.operator.report(ls.LastOperator)
	for i, p := range r.st.peers {
		rep.Peers = append(rep.Peers, p.report(ls.LastPeer[r.cfg.Peers[i].Name]))
	}
	if !r.st.lastFence.IsZero() {
		rep.LastFence = &FenceReport{At: r.st.lastFence, Reason: r.st.lastFenceReason}
	}
	if r.st.fenceErr != nil {
		rep.FenceError = r.st.fenceErr.Error()
	}
	rep.WriteHoldSince = timePtr(r.hold.since)
	if s := r.esc.lastStop; s != nil {
		stop := *s
		rep.MySQLDStop = &stop
	}
	if r.Terminating() {
		t := r.terminationReport()
		rep.Termination = &t
	}
	return rep
}

func (c contact) report(last time.Time) ContactReport {
	cr := ContactReport{Target: c.target, URL: c.url, LastContact: timePtr(last), AnsweredAt: timePtr(c.answeredAt)}
	if c.asked {
		cr.LastReply = c.kind.String()
	}
	if c.err != nil {
		cr.LastError = c.err.Error()
	}
	return cr
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
