package sidecar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// MySQL is what the sidecar needs of its local mysqld. pkg/mysql's Instance
// satisfies it; Fence there sets the read-only barrier, kills application
// connections and verifies the barrier holds.
type MySQL interface {
	Status(ctx context.Context) (mysql.Status, error)
	Fence(ctx context.Context) error
}

// Config is one sidecar: the decision's Settings plus where to reach the
// operator and the peers, and how long each call may take.
type Config struct {
	Settings
	// OperatorURL is the operator's base URL; GET /active-site is below it.
	OperatorURL string
	Peers       []Peer
	// RequestTimeout bounds each GET (default two thirds of PeerCheckInterval).
	RequestTimeout time.Duration
	// StatusTimeout bounds each status read of mysqld (default half of
	// PeerCheckInterval, within 200 ms and 2 s).
	StatusTimeout time.Duration
	// FenceTimeout bounds one fence with its verification (default 5 s);
	// Escalation bounds the whole fence, retries and stop included.
	FenceTimeout time.Duration
	// Process locates mysqld's process (escalate.go, process.go).
	Process Process
	// ProcessProbe, when set, replaces Process: a simulation's processes.
	ProcessProbe ProcessProbe
	// Gatherer, when set, asks the operator and the peers instead of
	// HTTP(S) to OperatorURL and the Peers' URLs: a simulation's network.
	Gatherer   Gatherer
	Escalation Escalation
	// RefreshGap is the least time from the start of one tick to a tick a
	// refresh request asks for (default a tenth of PeerCheckInterval, within
	// 50 ms and 250 ms).
	RefreshGap time.Duration
	// ViewKeysFile is the PEM file of the public view keys to accept,
	// re-read at every tick. When set, it replaces Settings.Keys.
	ViewKeysFile string
	// StateDir, when set, holds the FloorFile, the highest generation seen,
	// and the ActiveFile (mayactive.go), kept across restarts of the
	// process (the Pod's run directory).
	StateDir string
	// MayBeActive is an earlier process's active record, for a simulation's
	// restart; StateDir's ActiveFile is read as well.
	MayBeActive bool
	// ExecutableHash is the SHA-256 (hex) of this process's binary, sent in
	// every report and shown on /status; empty when unknown.
	ExecutableHash string
	// Upgrade is where and how an in-place upgrade writes and re-executes
	// the binary (upgrade.go); Handover, when set, is the state the process
	// that re-executed this one handed over (handover.go).
	Upgrade  Upgrade
	Handover *Handover
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// TLS, when set, is the site's certificate and CA bundle: every request
	// goes over HTTPS with it, and the peer port is served over TLS (tls.go).
	TLS pki.Source
	// Clone, when set, makes this site a clone donor: GET /peer/clone on
	// the peer port streams a physical backup of mysqld to the operator or
	// another site of the group, and to no one without TLS (pkg/clone).
	Clone *clone.Donor
	// Reclone, when set, carries out reclone phases on this site for the
	// operator: POST /sidecar/reclone on the peer port (pkg/reclone).
	Reclone *reclone.Executor
	// MysqldHoldFile, when set, is mysqld's hold file: while it exists
	// mysqld was stopped on purpose and passes the liveness check.
	MysqldHoldFile string
	// StopDelay is the Pod's termination grace period, the time a
	// termination (Terminate) fits in (default 30 s).
	StopDelay time.Duration
	// StartDelay is how long a mysqld that is not accepting connections yet
	// (crash recovery) passes the liveness check (default 30 s).
	StartDelay time.Duration
	// LiveTimeout bounds the liveness check's SQL read (default 2 s).
	LiveTimeout time.Duration
	// AppLogin, when set, logs in as the application account and out
	// again; readiness needs it to succeed (probes.go).
	AppLogin func(ctx context.Context) error
	// Clock tells the time and runs the timers; nil is the wall clock.
	// Tests and a simulation step their own.
	Clock clock.WithDelayedExecution
}

func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = c.PeerCheckInterval * 2 / 3
	}
	if c.StatusTimeout <= 0 {
		c.StatusTimeout = min(max(c.PeerCheckInterval/2, 200*time.Millisecond), 2*time.Second)
	}
	if c.FenceTimeout <= 0 {
		c.FenceTimeout = 5 * time.Second
	}
	c.Escalation = c.Escalation.withDefaults(c.PeerCheckInterval)
	if c.RefreshGap <= 0 {
		c.RefreshGap = defaultRefreshGap(c.PeerCheckInterval)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StopDelay <= 0 {
		c.StopDelay = 30 * time.Second
	}
	if c.StartDelay <= 0 {
		c.StartDelay = 30 * time.Second
	}
	if c.LiveTimeout <= 0 {
		c.LiveTimeout = 2 * time.Second
	}
	c.Upgrade = c.Upgrade.withDefaults(c.StateDir)
	return c
}

func (c Config) validate() error {
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	if err := checkURL("operator", c.OperatorURL); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range c.Peers {
		if p.Name == "" || p.Name == c.Site || seen[p.Name] {
			return fmt.Errorf("peer %q: names must be distinct sites other than %q: %w", p.Name, c.Site, ErrInvalidSettings)
		}
		seen[p.Name] = true
		if err := checkURL("peer "+p.Name, p.URL); err != nil {
			return err
		}
	}
	if err := c.Escalation.validate(c.PeerCheckInterval); err != nil {
		return err
	}
	if err := c.checkTLS(); err != nil {
		return err
	}
	if c.RequestTimeout >= c.PeerCheckInterval {
		return fmt.Errorf("request timeout %s not below peerCheckInterval %s: %w", c.RequestTimeout, c.PeerCheckInterval, ErrInvalidSettings)
	}
	return nil
}

func checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s URL %q: want http(s)://host[:port]: %w", what, raw, ErrInvalidSettings)
	}
	return nil
}

// Runner runs the fencing loop against the real world: it reads mysqld,
// gathers the views over HTTP, ticks the Loop and fences when told. It also
// serves the sidecar's HTTP endpoints (Handler).
type Runner struct {
	cfg     Config
	db      MySQL
	fetch   Gatherer
	log     *slog.Logger
	metrics *metrics
	// boot is this process's random id, sent in every report.
	boot string
	// handedOver is true when this process took over its predecessor's
	// state across a re-exec (handover.go).
	handedOver bool
	// keys is the key file, nil when Settings.Keys was given instead;
	// keysErr the last error reading it (logged once per change).
	keys    *fileKeys
	keysErr string
	// floor is the generation last written to the FloorFile.
	floor int64
	// refresh carries refresh requests to the Run loop; one waiting is enough.
	refresh chan struct{}
	// fenceMu keeps fences (and their escalation) from overlapping.
	fenceMu sync.Mutex

	// term is the termination, run once (terminate.go).
	term termination

	// activeMu serializes writes of the active record (mayactive.go); it
	// is taken before mu, never while mu is held.
	activeMu sync.Mutex
	mu       sync.Mutex // guards everything below
	// mayActive is the active record (mayactive.go); activeOnDisk what
	// this process last wrote to its file. bootActive is the record this
	// process booted with, which the boot rules go by: its own writable
	// reads must not make it fence before hearing the operator.
	mayActive    bool
	bootActive   bool
	activeOnDisk activeContent
	live         liveState
	esc          escState
	hold         holdState
	loop         *Loop
	st           runnerState
}

// NewRunner prepares a sidecar that boots at now. Nothing runs before Run.
func NewRunner(cfg Config, db MySQL, now time.Time) (*Runner, error) {
	cfg = cfg.withDefaults()
	var keys *fileKeys
	if cfg.ViewKeysFile != "" {
		keys = &fileKeys{path: cfg.ViewKeysFile}
		cfg.Keys = keys
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.StateDir != "" {
		floor, err := readFloor(cfg.StateDir)
		if err != nil {
			// Unreadable: stay safe without it; the 503-until-the-operator
			// rule still keeps this process from relaying an old view.
			cfg.Logger.Error("generation floor unreadable; starting without it", "dir", cfg.StateDir, "error", err)
		}
		cfg.Floor = max(cfg.Floor, floor)
		active, err := readActive(cfg.StateDir)
		if err != nil {
			cfg.Logger.Error("active record unreadable; fencing before the first read", "dir", cfg.StateDir, "error", err)
		}
		cfg.MayBeActive = cfg.MayBeActive || active
	}
	loop, err := NewLoop(cfg.Settings, now)
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, db: db, log: cfg.Logger, loop: loop, st: newRunnerState(cfg), refresh: make(chan struct{}, 1),
		boot: newBootID(), keys: keys, floor: cfg.Floor, mayActive: cfg.MayBeActive, bootActive: cfg.MayBeActive, term: termination{done: make(chan struct{})}}
	r.reloadKeys()
	r.restoreHandover(now)
	r.fetch = cfg.Gatherer
	if r.fetch == nil {
		f := &fetcher{client: newHTTPClient(cfg.PeerCheckInterval), timeout: cfg.RequestTimeout,
			operator: cfg.OperatorURL, peers: cfg.Peers, namespace: cfg.Namespace, group: cfg.Group}
		if err := cfg.useTLS(f.client); err != nil {
			return nil, err
		}
		r.fetch = f
	}
	targets := []string{targetName("")}
	for _, p := range cfg.Peers {
		targets = append(targets, targetName(p.Name))
	}
	r.metrics = newMetrics(targets, r.leaseSeconds, r.generation, r.writable)
	// A handed-over view or last state counts at once (mayactive.go).
	r.mu.Lock()
	r.noteActive(r.st.db)
	r.mu.Unlock()
	r.syncActive()
	return r, nil
}

// Run fences a writable mysqld at once (the boot safety net), then ticks every
// PeerCheckInterval, and in between wakes when the lease runs out or when a
// refresh request (Refresh) asks for a tick. Ticks never overlap. It returns
// when ctx ends. It is a Stepper driven by the Clock's timer.
func (r *Runner) Run(ctx context.Context) error {
	r.log.Info("sidecar starting", "group", r.cfg.Group, "site", r.cfg.Site, "peers", len(r.cfg.Peers),
		"leaseTimeout", r.cfg.LeaseTimeout, "peerCheckInterval", r.cfg.PeerCheckInterval)
	st := r.Start(ctx)
	timer := r.cfg.Clock.NewTimer(0)
	defer timer.Stop()
	for {
		timer.Reset(r.clockUntil(st.plan()))
		select {
		case <-ctx.Done():
			return nil
		case <-r.refresh:
			st.sched.request()
			continue
		case <-timer.C():
		}
		st.Fire(ctx)
	}
}

// Tick runs one round of the loop: fence first if the rule already says so
// for the mysqld last seen (enforceWake), then read mysqld, gather every
// view, decide, and fence if told. Each answer is offered to the Loop as it
// arrives, so a newer view naming another site fences at once instead of
// waiting for the slowest request (a hung operator holds the gather for
// RequestTimeout). A lease that runs out during the tick fences at its
// deadline (armLeaseWatch), and the rule is checked again once the gather
// is over. The tick ends by matching the write hold to the fence.
func (r *Runner) Tick(ctx context.Context) {
	r.reloadKeys()
	start := r.cfg.Clock.Now()
	r.enforceWake(ctx, start)
	defer r.armLeaseWatch(ctx, start)()
	// The report describes the read below: it echoes the operator's last
	// view received before it, never one received during this tick.
	rep := Report{Site: r.cfg.Site, Boot: r.boot, ExecutableHash: r.cfg.ExecutableHash}
	r.mu.Lock()
	rep.View = r.loop.OperatorEcho()
	echoGen := r.loop.opView.Generation
	r.mu.Unlock()
	db := r.readDB(ctx)
	if r.bootFenceFirst(ctx, start, db) {
		db = DBReadOnly
	}
	rep.DB, rep.Generation = db, r.generationInt()
	var early Decision
	op, peers := r.fetch.Gather(ctx, rep,
		func(peer string, rep Reply) {
			unlock := r.recordFirst(&rep)
			r.mu.Lock()
			d := r.loop.Offer(start, peer, rep, db)
			view, _ := r.loop.View()
			if d.Adopted {
				r.noteActive(DBUnknown)
			}
			r.mu.Unlock()
			unlock()
			if !d.Adopted {
				return
			}
			early.Adopted = true
			if d.Changed {
				early.Changed = true
				r.log.Info("adopted view", "early", true, "activeSite", view.ActiveSite,
					"generation", view.Generation, "source", targetName(peer))
			}
			r.keepFloor(view.Generation)
			// A fenced mysqld is read-only for the rest of the tick; a failed
			// fence leaves db as read, so the tick's decision tries again.
			if d.Fence && r.fence(ctx, d.Reason) == nil {
				db = DBReadOnly
			}
		})
	if r.fencedSince(start) {
		db = DBReadOnly
	}
	replies := []*Reply{&op}
	for i := range peers {
		replies = append(replies, &peers[i].Reply)
	}
	unlock := r.recordFirst(replies...)
	obs := Observation{Now: start, DB: db, Operator: op, Peers: peers}
	r.mu.Lock()
	d := r.loop.Tick(obs)
	if !d.Fence {
		late := r.loop.Check(r.cfg.Clock.Now(), db)
		d.Fence, d.Reason = late.Fence, late.Reason
	}
	view, _ := r.loop.View()
	source := r.loop.Source()
	r.noteActive(DBUnknown)
	r.mu.Unlock()
	unlock()
	r.syncActive()
	r.keepFloor(view.Generation)
	// The early adoption was logged when it happened; record logs Tick's own.
	d.Adopted = d.Adopted || early.Adopted
	r.record(obs, d, view.Generation, view.ActiveSite, source)
	if d.Fence {
		if r.fence(ctx, d.Reason) == nil {
			db = DBReadOnly
		}
	}
	r.syncHold(ctx)
	// After the hold is matched: the arm's DDL waits behind a held lock.
	r.armLeaseFence(ctx, db)
	r.mu.Lock()
	newGen := echoGen != 0 && r.loop.opView.Generation != echoGen
	r.mu.Unlock()
	if newGen {
		// This tick's report echoed an older operator view, so it is no
		// evidence about the new generation's failure: report again soon,
		// about a read made after this view (a refresh tick, RefreshGap away).
		r.requestTick()
	}
}

// check reads mysqld and applies the rule without gathering: at boot, and
// when the lease runs out between ticks. Like Tick it first fences on the
// state last seen (enforceWake).
func (r *Runner) check(ctx context.Context) {
	r.enforceWake(ctx, r.cfg.Clock.Now())
	db := r.readDB(ctx)
	r.mu.Lock()
	d := r.loop.Check(r.cfg.Clock.Now(), db)
	r.mu.Unlock()
	if d.Fence {
		if r.fence(ctx, d.Reason) == nil {
			db = DBReadOnly
		}
	}
	r.syncHold(ctx)
	// After the hold is matched: the arm's DDL waits behind a held lock.
	r.armLeaseFence(ctx, db)
}

// readDB reads mysqld's state within StatusTimeout and remembers it for /readyz.
func (r *Runner) readDB(ctx context.Context) DBState {
	sctx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
	defer cancel()
	st, err := r.db.Status(sctx)
	state, pid := r.classify(sctx, st, err)
	r.mu.Lock()
	prev := r.st.db
	r.st.db, r.st.dbErr, r.st.dbAt = state, err, r.cfg.Clock.Now()
	r.noteRead(state, pid, st.Replica != nil)
	r.noteActive(state)
	r.mu.Unlock()
	r.syncActive()
	if state != prev {
		r.log.Info("mysqld state", "state", state.String(), "was", prev.String(), "error", err)
	}
	return state
}

// dbStateOf tells a status read apart: only a missing socket or a refused
// connection may mean mysqld down (classify asks the process evidence);
// any other failure leaves it unknown.
func dbStateOf(st mysql.Status, err error) DBState {
	switch {
	case err == nil && st.Writable():
		return DBWritable
	case err == nil:
		return DBReadOnly
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT):
		return DBDown
	}
	return DBUnknown
}

// fence fences mysqld within the escalation budget, and stops mysqld when
// that runs out (fenceEscalating).
func (r *Runner) fence(ctx context.Context, reason string) error {
	return r.fenceEscalating(ctx, reason)
}

// fenceOnce fences mysqld and verifies it, by deadline. A failure is
// logged, counted and returned.
func (r *Runner) fenceOnce(ctx context.Context, reason string, deadline time.Time) error {
	fctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := r.db.Fence(fctx)
	if err == nil {
		err = r.verify(fctx)
	}
	r.mu.Lock()
	r.st.noteFence(r.cfg.Clock.Now(), reason, err)
	if err == nil {
		r.noteActive(DBReadOnly)
	}
	r.mu.Unlock()
	r.syncActive()
	if err != nil {
		r.metrics.fenceErrors.Inc()
		r.log.Error("self-fence failed", "reason", reason, "error", fmt.Errorf("fence %s: %w", r.cfg.Site, err))
		return err
	}
	r.metrics.selfFences.WithLabelValues(reason).Inc()
	r.log.Warn("self-fenced mysqld", "reason", reason, "site", r.cfg.Site)
	return nil
}

// verify reads mysqld back after a fence: it must refuse writes.
func (r *Runner) verify(ctx context.Context) error {
	st, err := r.db.Status(ctx)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if st.Writable() {
		return ErrStillWritable
	}
	r.mu.Lock()
	r.st.db, r.st.dbErr, r.st.dbAt = DBReadOnly, nil, r.cfg.Clock.Now()
	r.mu.Unlock()
	return nil
}

func (r *Runner) leaseDeadline() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loop.LeaseDeadline()
}

func (r *Runner) leaseSeconds() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loop.LeaseRemaining(r.cfg.Clock.Now()).Seconds()
}

// clockUntil is how long until t on the Runner's clock.
func (r *Runner) clockUntil(t time.Time) time.Duration { return t.Sub(r.cfg.Clock.Now()) }

func (r *Runner) generationInt() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, _ := r.loop.View()
	return v.Generation
}

func (r *Runner) generation() float64 { return float64(r.generationInt()) }

func (r *Runner) writable() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.db == DBWritable {
		return 1
	}
	return 0
}

// newBootID is a random id of this process.
func newBootID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// reloadKeys re-reads the key file, logging a change of keys and, once per
// change, a failure to read them.
func (r *Runner) reloadKeys() {
	if r.keys == nil {
		return
	}
	changed, err := r.keys.reload()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != r.keysErr && err != nil {
		r.log.Error("view keys unusable; keeping the last good ones", "error", err, "accepted", r.keys.IDs())
	}
	r.keysErr = msg
	if changed {
		r.log.Info("view keys loaded", "accepted", r.keys.IDs())
	}
}

// keepFloor writes gen to the FloorFile when it is above the last written.
func (r *Runner) keepFloor(gen int64) {
	if r.cfg.StateDir == "" || gen <= r.floor {
		return
	}
	if err := writeFloor(r.cfg.StateDir, gen); err != nil {
		r.log.Error("keep generation floor", "generation", gen, "error", err)
		return
	}
	r.floor = gen
}
