package sidecar

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var testSettings = Settings{Namespace: "shop", Group: "orders", Site: "iad",
	LeaseTimeout: 20 * time.Second, PeerCheckInterval: 5 * time.Second, Keys: TestKeys}

// view is a view of the test group naming active at generation gen, observed
// at t0 plus obs.
func view(active string, gen int64, obs time.Duration) v1alpha1.ActiveSiteView {
	return Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: active, Generation: gen, ObservedAt: t0.Add(obs)})
}

func op(v v1alpha1.ActiveSiteView) Reply { return ViewReply(v) }

func peer(name string, r Reply) PeerReply { return PeerReply{Peer: name, Reply: r} }

var (
	unreachable = Reply{Err: ErrUnreachable}
	tooOld      = Reply{Kind: ReplyTooOld, Err: ErrPeerTooOld}
	noView      = Reply{Kind: ReplyNoView, Err: ErrNoView}
	malformed   = Reply{Kind: ReplyMalformed, Err: ErrMalformed}
)

// step is one Tick (or, with check set, one Check) and what it must decide.
type step struct {
	at    time.Duration // since boot
	db    DBState
	op    Reply
	peers []PeerReply
	check bool
	// want
	fence   string // "" for no fence, else the reason
	active  string // the cached view's active site, "" for none
	gen     int64
	source  string
	adopted bool
	ignored []error // the sentinels of the ignored answers, in order
}

var loopCases = []struct {
	name  string
	steps []step
}{
	// Adopt or keep.
	{"adopt: first operator view", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true}}},
	{"adopt: higher generation from the operator", []step{
		{db: DBReadOnly, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBReadOnly, op: op(view("pdx", 2, 5*time.Second)), active: "pdx", gen: 2, source: "operator", adopted: true}}},
	{"keep: lower generation from a peer, refused as older", []step{
		{db: DBReadOnly, op: op(view("pdx", 3, 0)), active: "pdx", gen: 3, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBReadOnly, peers: []PeerReply{peer("pdx", op(view("iad", 2, 9*time.Second)))},
			active: "pdx", gen: 3, source: "operator", ignored: []error{ErrOlderView}}}},
	{"adopt: equal generation observed later", []step{
		{db: DBWritable, op: op(view("iad", 4, 0)), active: "iad", gen: 4, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", op(view("iad", 4, time.Second)))},
			active: "iad", gen: 4, source: "peer/pdx", adopted: true}}},
	{"keep: equal generation observed earlier", []step{
		{db: DBWritable, op: op(view("iad", 4, 3*time.Second)), active: "iad", gen: 4, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", op(view("iad", 4, time.Second)))},
			active: "iad", gen: 4, source: "operator"}}},
	{"keep: equal generation observed at the same instant", []step{
		{db: DBWritable, op: op(view("iad", 4, 0)), peers: []PeerReply{peer("pdx", op(view("iad", 4, 0)))},
			active: "iad", gen: 4, source: "operator", adopted: true}}},
	{"adopt: a peer's newer view over the operator's in the same tick", []step{
		{db: DBReadOnly, op: op(view("iad", 1, 0)), peers: []PeerReply{peer("fra", op(view("pdx", 2, 0)))},
			active: "pdx", gen: 2, source: "peer/fra", adopted: true}}},

	// Fence reasons.
	{"fence: view names another site and mysqld is writable", []step{
		{db: DBWritable, op: op(view("pdx", 2, 0)), fence: ReasonView, active: "pdx", gen: 2, source: "operator", adopted: true}}},
	{"fence: view names another site and mysqld state is unknown", []step{
		{db: DBUnknown, op: op(view("pdx", 2, 0)), fence: ReasonView, active: "pdx", gen: 2, source: "operator", adopted: true}}},
	{"no fence: view names another site but mysqld is read-only", []step{
		{db: DBReadOnly, op: op(view("pdx", 2, 0)), active: "pdx", gen: 2, source: "operator", adopted: true}}},
	{"no fence: view names another site but mysqld is down", []step{
		{db: DBDown, op: op(view("pdx", 2, 0)), active: "pdx", gen: 2, source: "operator", adopted: true}}},
	{"no fence: view names this site", []step{
		{db: DBWritable, op: op(view("iad", 2, 0)), active: "iad", gen: 2, source: "operator", adopted: true}}},
	{"fence: stale primary learns a newer generation from a peer, operator unreachable", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBWritable, op: unreachable, active: "iad", gen: 1, source: "operator"},
		{at: 10 * time.Second, db: DBWritable, op: unreachable, peers: []PeerReply{peer("pdx", op(view("pdx", 2, 8*time.Second)))},
			fence: ReasonView, active: "pdx", gen: 2, source: "peer/pdx", adopted: true}}},
	{"fence: view names another site wins over an expired lease", []step{
		{db: DBReadOnly, op: op(view("pdx", 2, 0)), active: "pdx", gen: 2, source: "operator", adopted: true},
		{at: 30 * time.Second, db: DBWritable, fence: ReasonView, active: "pdx", gen: 2, source: "operator"}}},

	// Lease.
	{"lease: runs from boot, where the boot rule already fences", []step{
		{db: DBReadOnly, op: unreachable},
		{at: 19 * time.Second, db: DBReadOnly, op: unreachable},
		{at: 20 * time.Second, db: DBWritable, op: unreachable, fence: ReasonBoot}}},
	{"lease: still valid just before leaseTimeout", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 19*time.Second + 999*time.Millisecond, db: DBWritable, op: unreachable, active: "iad", gen: 1, source: "operator"}}},
	{"fence: lease expired after leaseTimeout without contact", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 10 * time.Second, db: DBWritable, op: unreachable, peers: []PeerReply{peer("pdx", unreachable)}, active: "iad", gen: 1, source: "operator"},
		{at: 20 * time.Second, db: DBWritable, op: unreachable, peers: []PeerReply{peer("pdx", unreachable)},
			fence: ReasonLease, active: "iad", gen: 1, source: "operator"}}},
	{"fence: Check fences on lease expiry between ticks", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 20 * time.Second, db: DBWritable, check: true, fence: ReasonLease, active: "iad", gen: 1, source: "operator"}}},
	{"lease: renewed by the operator", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 15 * time.Second, db: DBWritable, op: op(view("iad", 1, 15*time.Second)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 30 * time.Second, db: DBWritable, op: unreachable, active: "iad", gen: 1, source: "operator"}}},
	{"lease: renewed by a peer while the operator is down", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 15 * time.Second, db: DBWritable, op: unreachable, peers: []PeerReply{peer("pdx", op(view("iad", 1, 0)))},
			active: "iad", gen: 1, source: "operator"},
		{at: 30 * time.Second, db: DBWritable, op: unreachable, active: "iad", gen: 1, source: "operator"},
		{at: 35 * time.Second, db: DBWritable, op: unreachable, fence: ReasonLease, active: "iad", gen: 1, source: "operator"}}},
	{"lease: not renewed by a peer without a view (503)", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 15 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", noView)}, active: "iad", gen: 1, source: "operator"},
		{at: 20 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", noView)}, fence: ReasonLease, active: "iad", gen: 1, source: "operator"}}},
	{"lease: not renewed by an older peer (404)", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 20 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", tooOld)}, fence: ReasonLease, active: "iad", gen: 1, source: "operator"}}},
	{"lease: not renewed by ignored answers", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 20 * time.Second, db: DBWritable, op: malformed, peers: []PeerReply{peer("pdx", op(v1alpha1.ActiveSiteView{Group: "billing", ActiveSite: "iad", Generation: 9}))},
			fence: ReasonLease, active: "iad", gen: 1, source: "operator", ignored: []error{ErrMalformed, ErrForeignView}}}},
	{"no fence: lease expired but mysqld is read-only", []step{
		{db: DBReadOnly, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: time.Minute, db: DBReadOnly, active: "iad", gen: 1, source: "operator"}}},

	// Boot safety net.
	{"boot: writable mysqld with nothing heard is fenced", []step{
		{db: DBWritable, fence: ReasonBoot}}},
	{"boot: a peer naming this site does not lift it", []step{
		{db: DBWritable, peers: []PeerReply{peer("pdx", op(view("iad", 5, 0)))}, fence: ReasonBoot, active: "iad", gen: 5, source: "peer/pdx", adopted: true}}},
	{"boot: the operator naming this site lifts it", []step{
		{db: DBWritable, op: unreachable, fence: ReasonBoot},
		{at: 5 * time.Second, db: DBWritable, op: op(view("iad", 5, 5*time.Second)), active: "iad", gen: 5, source: "operator", adopted: true}}},
	{"boot: the operator naming another site fences by view", []step{
		{db: DBWritable, op: op(view("pdx", 5, 0)), fence: ReasonView, active: "pdx", gen: 5, source: "operator", adopted: true}}},
	{"boot: read-only mysqld needs nothing", []step{
		{db: DBReadOnly, peers: []PeerReply{peer("pdx", op(view("iad", 5, 0)))}, active: "iad", gen: 5, source: "peer/pdx", adopted: true}}},
	{"boot: once the operator answered, a peer's newer view naming this site is trusted", []step{
		{db: DBReadOnly, op: op(view("pdx", 5, 0)), active: "pdx", gen: 5, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBWritable, op: unreachable, peers: []PeerReply{peer("pdx", op(view("iad", 6, 4*time.Second)))},
			active: "iad", gen: 6, source: "peer/pdx", adopted: true}}},
	{"boot: an ignored operator answer does not lift it", []step{
		{db: DBWritable, op: op(v1alpha1.ActiveSiteView{Namespace: "other", Group: "orders", ActiveSite: "iad", Generation: 5}),
			fence: ReasonBoot, ignored: []error{ErrForeignView}}}},

	// Bad answers.
	{"bad: malformed operator answer is ignored and listed", []step{
		{db: DBReadOnly, op: malformed, ignored: []error{ErrMalformed}}}},
	{"bad: view without a generation is malformed", []step{
		{db: DBReadOnly, op: op(view("iad", 0, 0)), ignored: []error{ErrMalformed}}}},
	{"bad: view without an active site is malformed", []step{
		{db: DBReadOnly, peers: []PeerReply{peer("pdx", op(view("", 3, 0)))}, ignored: []error{ErrMalformed}}}},
	{"bad: view of another group is ignored and listed", []step{
		{db: DBReadOnly, op: op(view("iad", 1, 0)), active: "iad", gen: 1, source: "operator", adopted: true},
		{at: 5 * time.Second, db: DBWritable, peers: []PeerReply{peer("pdx", op(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "billing", ActiveSite: "pdx", Generation: 7}))},
			active: "iad", gen: 1, source: "operator", ignored: []error{ErrForeignView}}}},
	{"bad: view of another namespace is ignored and listed", []step{
		{db: DBReadOnly, peers: []PeerReply{peer("pdx", op(v1alpha1.ActiveSiteView{Namespace: "dev", Group: "orders", ActiveSite: "pdx", Generation: 7}))},
			ignored: []error{ErrForeignView}}}},
	{"bad: view without a namespace is accepted", []step{
		{db: DBReadOnly, op: op(Sign(v1alpha1.ActiveSiteView{Group: "orders", ActiveSite: "pdx", Generation: 7})), active: "pdx", gen: 7, source: "operator", adopted: true}}},
	{"bad: a 404 peer is skipped silently, the operator alone decides", []step{
		{db: DBWritable, op: op(view("iad", 1, 0)), peers: []PeerReply{peer("pdx", tooOld)}, active: "iad", gen: 1, source: "operator", adopted: true}}},
	{"bad: a 503 peer and an unreachable one are not listed", []step{
		{db: DBReadOnly, op: unreachable, peers: []PeerReply{peer("pdx", noView), peer("fra", unreachable)}}}},
}

func TestLoop(t *testing.T) {
	for _, tc := range loopCases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLoop(testSettings, t0)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				var d Decision
				if s.check {
					d = l.Check(t0.Add(s.at), s.db)
				} else {
					d = l.Tick(Observation{Now: t0.Add(s.at), DB: s.db, Operator: s.op, Peers: s.peers})
				}
				checkStep(t, i, l, s, d)
			}
		})
	}
}

func checkStep(t *testing.T, i int, l *Loop, s step, d Decision) {
	t.Helper()
	if got := map[bool]string{true: d.Reason}[d.Fence]; got != s.fence || (!d.Fence && d.Reason != "") {
		t.Errorf("step %d: fence %v reason %q, want reason %q", i, d.Fence, d.Reason, s.fence)
	}
	v, ok := l.View()
	if ok != (s.active != "") || v.ActiveSite != s.active || v.Generation != s.gen || l.Source() != s.source {
		t.Errorf("step %d: view %+v (held %v), want active %q gen %d source %q", i, v, ok, s.active, s.gen, s.source)
	}
	if d.Adopted != s.adopted {
		t.Errorf("step %d: adopted %v, want %v", i, d.Adopted, s.adopted)
	}
	if len(d.Ignored) != len(s.ignored) {
		t.Fatalf("step %d: ignored %v, want %v", i, d.Ignored, s.ignored)
	}
	for j, ig := range d.Ignored {
		if !errors.Is(ig.Err, s.ignored[j]) {
			t.Errorf("step %d: ignored[%d] from %s = %v, want %v", i, j, ig.From, ig.Err, s.ignored[j])
		}
	}
}

func TestLoopLeaseDeadlineAndState(t *testing.T) {
	l, err := NewLoop(testSettings, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.LeaseDeadline(); !got.Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("deadline before any contact = %s, want boot + leaseTimeout", got)
	}
	st := l.State()
	if !st.AwaitingOperator || st.HasView || !st.LastContact.IsZero() {
		t.Fatalf("state at boot = %+v", st)
	}
	l.Tick(Observation{Now: t0.Add(7 * time.Second), DB: DBReadOnly, Peers: []PeerReply{peer("pdx", op(view("iad", 1, 0)))}})
	if got := l.LeaseRemaining(t0.Add(10 * time.Second)); got != 17*time.Second {
		t.Fatalf("lease remaining = %s, want 17s", got)
	}
	st = l.State()
	if !st.AwaitingOperator || !st.LastContact.Equal(t0.Add(7*time.Second)) || !st.LastPeer["pdx"].Equal(t0.Add(7*time.Second)) || !st.LastOperator.IsZero() {
		t.Fatalf("state after a peer contact = %+v", st)
	}
	// A late tick with an earlier Now never moves the lease back.
	l.Tick(Observation{Now: t0.Add(6 * time.Second), DB: DBReadOnly, Operator: op(view("iad", 1, 0))})
	if st = l.State(); st.AwaitingOperator || !st.LastContact.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("state after an out-of-order tick = %+v", st)
	}
}

func TestSettingsValidate(t *testing.T) {
	for name, s := range map[string]Settings{
		"no group":            {Site: "iad", LeaseTimeout: time.Minute, PeerCheckInterval: time.Second},
		"no site":             {Group: "g", LeaseTimeout: time.Minute, PeerCheckInterval: time.Second},
		"zero interval":       {Group: "g", Site: "iad", LeaseTimeout: time.Minute},
		"lease below 3 ticks": {Group: "g", Site: "iad", LeaseTimeout: 2 * time.Second, PeerCheckInterval: time.Second},
	} {
		if _, err := NewLoop(s, t0); !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("%s: NewLoop error %v, want ErrInvalidSettings", name, err)
		}
	}
	if err := testSettings.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestClassify(t *testing.T) {
	good := `{"namespace":"shop","group":"orders","activeSite":"iad","generation":3,"observedAt":"2026-03-01T12:00:00Z"}`
	cases := []struct {
		name     string
		status   int
		body     string
		fromPeer bool
		kind     ReplyKind
		err      error
	}{
		{"operator 200 view", http.StatusOK, good, false, ReplyView, nil},
		{"peer 200 view with unknown fields", http.StatusOK, `{"group":"orders","activeSite":"iad","generation":3,"extra":1}`, true, ReplyView, nil},
		{"200 bad JSON", http.StatusOK, `{"group":`, true, ReplyMalformed, ErrMalformed},
		{"200 wrong types", http.StatusOK, `{"generation":"three"}`, false, ReplyMalformed, ErrMalformed},
		{"200 bad time", http.StatusOK, `{"observedAt":"yesterday"}`, false, ReplyMalformed, ErrMalformed},
		{"peer 404", http.StatusNotFound, "404 page not found", true, ReplyTooOld, ErrPeerTooOld},
		{"peer 503", http.StatusServiceUnavailable, `{"error":"no view yet"}`, true, ReplyNoView, ErrNoView},
		{"operator 404", http.StatusNotFound, "", false, ReplyNone, ErrUnreachable},
		{"operator 503", http.StatusServiceUnavailable, "", false, ReplyNone, ErrUnreachable},
		{"peer 500", http.StatusInternalServerError, "", true, ReplyNone, ErrUnreachable},
	}
	for _, tc := range cases {
		r := Classify(tc.status, []byte(tc.body), tc.fromPeer)
		if r.Kind != tc.kind || (tc.err == nil) != (r.Err == nil) || (tc.err != nil && !errors.Is(r.Err, tc.err)) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, r.Kind, r.Err, tc.kind, tc.err)
		}
	}
	if r := Classify(http.StatusOK, []byte(good), false); r.View.Generation != 3 || r.View.ActiveSite != "iad" || !r.View.ObservedAt.Equal(t0) {
		t.Errorf("decoded view %+v", r.View)
	}
}

func TestLoopChangedOnlyWhenTheAuthorityMoves(t *testing.T) {
	l, err := NewLoop(testSettings, t0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		v                v1alpha1.ActiveSiteView
		adopted, changed bool
	}{
		{view("iad", 1, 0), true, true},             // the first view
		{view("iad", 1, time.Second), true, false},  // a fresher copy of the same view
		{view("iad", 1, 0), false, false},           // an older copy
		{view("pdx", 2, 2*time.Second), true, true}, // a failover
		{view("pdx", 3, 2*time.Second), true, true}, // a new generation naming the same site
	}
	for i, s := range steps {
		d := l.Tick(Observation{Now: t0.Add(time.Duration(i) * time.Second), DB: DBReadOnly, Operator: op(s.v)})
		if d.Adopted != s.adopted || d.Changed != s.changed {
			t.Errorf("step %d: adopted %v changed %v, want %v %v", i, d.Adopted, d.Changed, s.adopted, s.changed)
		}
	}
}

// Offer acts on a newer valid view as it arrives, and only on that.
func TestLoopOffer(t *testing.T) {
	foreign := view("pdx", 9, 0)
	foreign.Group = "billing"
	cases := []struct {
		name    string
		setup   Reply // the operator's answer of a first Tick at t0 (ReplyNone: none)
		peer    string
		offer   Reply
		db      DBState
		fence   bool
		adopted bool
		active  string
		gen     int64
		source  string
	}{
		{name: "newer view naming another site, writable: fence", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(view("pdx", 2, 0)), db: DBWritable, fence: true, adopted: true, active: "pdx", gen: 2, source: "peer/pdx"},
		{name: "newer view naming another site, unknown: fence", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(view("pdx", 2, 0)), db: DBUnknown, fence: true, adopted: true, active: "pdx", gen: 2, source: "peer/pdx"},
		{name: "newer view naming another site, read-only: adopt only", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(view("pdx", 2, 0)), db: DBReadOnly, adopted: true, active: "pdx", gen: 2, source: "peer/pdx"},
		{name: "newer view from the operator naming another site: fence", setup: op(view("iad", 1, 0)),
			offer: op(view("pdx", 2, 0)), db: DBWritable, fence: true, adopted: true, active: "pdx", gen: 2, source: "operator"},
		{name: "newer view naming us: adopt only", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(view("iad", 2, 0)), db: DBWritable, adopted: true, active: "iad", gen: 2, source: "peer/pdx"},
		{name: "first view, naming us, while awaiting the operator: adopt only", peer: "pdx",
			offer: op(view("iad", 1, 0)), db: DBWritable, adopted: true, active: "iad", gen: 1, source: "peer/pdx"},
		{name: "first view naming another site: fence", peer: "pdx",
			offer: op(view("pdx", 1, 0)), db: DBWritable, fence: true, adopted: true, active: "pdx", gen: 1, source: "peer/pdx"},
		{name: "equal view: nothing", setup: op(view("pdx", 2, 0)), peer: "pdx",
			offer: op(view("pdx", 2, 0)), db: DBWritable, active: "pdx", gen: 2, source: "operator"},
		{name: "older view: nothing", setup: op(view("iad", 3, 0)), peer: "pdx",
			offer: op(view("pdx", 2, 0)), db: DBWritable, active: "iad", gen: 3, source: "operator"},
		{name: "malformed: ignored", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: malformed, db: DBWritable, active: "iad", gen: 1, source: "operator"},
		{name: "invalid view: ignored", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(view("pdx", 0, 0)), db: DBWritable, active: "iad", gen: 1, source: "operator"},
		{name: "foreign view: ignored", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: op(foreign), db: DBWritable, active: "iad", gen: 1, source: "operator"},
		{name: "no answer: nothing", setup: op(view("iad", 1, 0)), peer: "pdx",
			offer: unreachable, db: DBWritable, active: "iad", gen: 1, source: "operator"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewLoop(testSettings, t0)
			if err != nil {
				t.Fatal(err)
			}
			if c.setup.Kind != ReplyNone {
				l.Tick(Observation{Now: t0, DB: DBReadOnly, Operator: c.setup})
			}
			before := l.State()
			now := t0.Add(5 * time.Second)
			d := l.Offer(now, c.peer, c.offer, c.db)
			if d.Fence != c.fence || (c.fence && d.Reason != ReasonView) || d.Adopted != c.adopted || len(d.Ignored) != 0 {
				t.Fatalf("Offer decided %+v, want fence %v adopted %v", d, c.fence, c.adopted)
			}
			v, _ := l.View()
			if v.ActiveSite != c.active || v.Generation != c.gen || l.Source() != c.source {
				t.Fatalf("view %+v, want %s gen %d from %s", v, c.active, c.gen, c.source)
			}
			after := l.State()
			// Only an adoption renews the lease, as Tick would for the same answer.
			if wantContact := before.LastContact; c.adopted {
				if !after.LastContact.Equal(now) {
					t.Fatalf("last contact %s, want %s", after.LastContact, now)
				}
			} else if !after.LastContact.Equal(wantContact) {
				t.Fatalf("last contact moved to %s without an adoption", after.LastContact)
			}
			// Offering it again, or hearing it in the tick, adds nothing.
			if again := l.Offer(now, c.peer, c.offer, c.db); again.Adopted || again.Fence {
				t.Fatalf("second Offer decided %+v", again)
			}
			var peers []PeerReply
			var opr Reply
			if c.peer == "" {
				opr = c.offer
			} else {
				peers = []PeerReply{peer(c.peer, c.offer)}
			}
			db := c.db
			if c.fence {
				db = DBReadOnly // what the runner passes after the early fence held
			}
			td := l.Tick(Observation{Now: now, DB: db, Operator: opr, Peers: peers})
			// The tick's own rule still applies (the boot fence, a view that
			// Offer left alone); it must not adopt again nor repeat the fence.
			if td.Adopted || td.Changed || (c.fence && td.Fence) {
				t.Fatalf("the tick after the offer decided %+v, want no adoption and no second fence", td)
			}
		})
	}
}
