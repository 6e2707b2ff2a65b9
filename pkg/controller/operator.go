package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/grouploop"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// Router is pkg/routing's Router as the operator uses it.
type Router interface {
	failover.Router
	Converge(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error
}

// Options are the operator-wide settings.
type Options struct {
	// ProbeTimeout bounds one probe of a site; 0 means the group's pollInterval.
	ProbeTimeout time.Duration
	// DrainTimeout bounds an emergency failover's wait for the target's relay log.
	DrainTimeout time.Duration
	// CallTimeout bounds one SQL or Kubernetes call of an action.
	CallTimeout time.Duration
	// FenceTimeout bounds one SQL fence attempt on an old primary that may not answer.
	FenceTimeout time.Duration
	// MaxLag is the replica lag above which a group is Degraded (ReplicaLagging).
	MaxLag time.Duration
	// ResyncPeriod re-converges every group's objects at least this often.
	ResyncPeriod time.Duration
	// NudgeTimeout bounds one nudge of a sidecar (authority.Nudger); 0
	// means 1 s, negative turns nudges off.
	NudgeTimeout time.Duration
	// OperatorExecutableHash is the SHA-256 of the operator's binary, for
	// status.operatorExecutableHash.
	OperatorExecutableHash string
	// StallTimeout is how long a group's loop may go without completing a
	// pass before Healthy fails; 0 means StallLimit's default (health.go).
	StallTimeout time.Duration
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.DrainTimeout, 30*time.Second)
	def(&o.CallTimeout, 5*time.Second)
	def(&o.FenceTimeout, time.Second)
	def(&o.MaxLag, 30*time.Second)
	def(&o.ResyncPeriod, 5*time.Minute)
	return o
}

// loop is what of the settings the group loops read.
func (o Options) loop() grouploop.Options {
	return grouploop.Options{ProbeTimeout: o.ProbeTimeout, MaxLag: o.MaxLag, OperatorExecutableHash: o.OperatorExecutableHash,
		Failover: failover.Settings{DrainTimeout: o.DrainTimeout, CallTimeout: o.CallTimeout, FenceTimeout: o.FenceTimeout}}
}

// Deps are what New wires together. Client, Reader and Resolver are required.
type Deps struct {
	// Client writes (status, Events) and reads through the cache.
	Client client.Client
	// Reader reads straight from the API server (the manager's APIReader).
	Reader   client.Reader
	Resolver grouploop.Resolver
	// Router converges objects and moves clients; nil skips both (tests of the loop alone).
	Router   Router
	Recorder events.EventRecorder
	// Registerer receives the metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Registry is shared with the API; nil makes one.
	Registry *authority.Registry
	Open     grouploop.Opener
	// Clock tells the time and runs the loops' timers; nil is the wall clock.
	Clock clock.Clock
	Log   logr.Logger

	// Recloner runs reclone phases on the sites' sidecars; nil: reclone
	// requests are refused (RecloneUnavailable; pkg/grouploop reclone.go).
	Recloner grouploop.Recloner
	// SidecarURL is where each site's sidecar is nudged; nil means DefaultSidecarURL.
	SidecarURL authority.SidecarURL
	// Leadership is asked before every step that makes a site writable; nil
	// means leader election is off (this process is the only operator).
	Leadership authority.Leadership
	// Auth, when set, is the API's report check: the loop persists the
	// group's switch to authenticated reports.
	Auth *authority.ReportAuth
	// Credentials, when set, is the operator's certificate: nudges to
	// https:// sidecars present it and check the site's identity.
	Credentials pki.Source
	// SidecarBinary, when set, is the sidecar binary the operator ships:
	// its hash is compared with each sidecar's, and in-place upgrades send it.
	SidecarBinary string
}

// Operator owns the poll loops of every group. It is a manager Runnable
// that needs leader election: loops run only on the leader.
type Operator struct {
	// env is what every group's loop shares.
	env    *grouploop.Env
	client client.Client
	router Router
	opts   Options

	started chan struct{}
	// loaded latches once Ready found every group loaded (health.go).
	loaded atomic.Bool
	mu     sync.Mutex
	ctx    context.Context
	loops  map[types.NamespacedName]*loopHandle
}

type loopHandle struct {
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
	// lastPass is when the loop last completed a pass (its start before
	// the first), interval its group's poll interval then (health.go).
	lastPass time.Time
	interval time.Duration
	// budget is the longest one of its passes may take (grouploop.Env.Passed).
	budget time.Duration
}

// New wires an Operator.
func New(d Deps, opts Options) (*Operator, error) {
	if d.Client == nil || d.Reader == nil || d.Resolver == nil {
		return nil, errors.New("controller: Client, Reader and Resolver are required")
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	if d.Open == nil {
		d.Open = mysql.Open
	}
	if d.Registry == nil {
		d.Registry = authority.NewRegistry(d.Clock.Now)
	}
	m := grouploop.NewMetrics(d.Registerer)
	var nudge func(types.NamespacedName, string)
	if opts.NudgeTimeout >= 0 {
		n := authority.NewNudger(d.SidecarURL, opts.NudgeTimeout, d.Registerer, d.Log)
		n.UseCredentials(d.Credentials)
		d.Registry.NotifyOnPublish(n.Published)
		nudge = n.Site
	}
	var upgrader grouploop.SidecarUpgrader
	if d.SidecarBinary != "" {
		u, err := authority.NewSidecarUpgrader(d.SidecarURL, d.SidecarBinary, d.Registerer, d.Log)
		if err != nil {
			return nil, fmt.Errorf("controller: --sidecar-binary: %w", err)
		}
		u.UseCredentials(d.Credentials)
		d.Log.Info("shipping a sidecar binary", "path", d.SidecarBinary, "sha256", u.Hash())
		upgrader = u
	}
	opts = opts.withDefaults()
	o := &Operator{client: d.Client, router: d.Router, opts: opts,
		started: make(chan struct{}), loops: map[types.NamespacedName]*loopHandle{}}
	o.env = &grouploop.Env{Client: d.Client, Reader: d.Reader, Resolver: d.Resolver, Router: d.Router,
		Registry: d.Registry, Notifier: grouploop.NewNotifier(d.Recorder, m), Metrics: m, Auth: d.Auth,
		Open: d.Open, Clock: d.Clock, Leader: d.Leadership, Options: opts.loop(), Log: d.Log,
		Nudge: nudge, Wake: o.Wake, Passed: o.passed, Budget: o.budgeted, Upgrader: upgrader, Recloner: d.Recloner}
	return o, nil
}

// Registry is the Operator's registry of published views and sidecar reports.
func (o *Operator) Registry() *authority.Registry { return o.env.Registry }

// Metrics are the Operator's collectors.
func (o *Operator) Metrics() *grouploop.Metrics { return o.env.Metrics }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (o *Operator) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it holds the loops' context until ctx
// ends, then stops every loop and waits for them.
func (o *Operator) Start(ctx context.Context) error {
	o.mu.Lock()
	o.ctx = ctx
	o.mu.Unlock()
	close(o.started)
	<-ctx.Done()
	o.mu.Lock()
	loops := o.loops
	o.loops = map[types.NamespacedName]*loopHandle{}
	o.mu.Unlock()
	for _, h := range loops {
		h.cancel()
		<-h.done
	}
	return nil
}

// EnsureLoop starts the group's poll loop unless it runs. It fails until
// Start was called.
func (o *Operator) EnsureLoop(key types.NamespacedName) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ctx == nil {
		return fmt.Errorf("poll loop %s: operator not started", key)
	}
	if h, ok := o.loops[key]; ok {
		select {
		case <-h.done:
		default:
			return nil
		}
	}
	ctx, cancel := context.WithCancel(o.ctx)
	h := &loopHandle{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1), lastPass: o.env.Clock.Now()}
	o.loops[key] = h
	go func() {
		defer close(h.done)
		grouploop.New(o.env, key, h.wake).Run(ctx)
	}()
	return nil
}

// StopLoop stops the group's poll loop and waits for it.
func (o *Operator) StopLoop(key types.NamespacedName) {
	o.mu.Lock()
	h, ok := o.loops[key]
	delete(o.loops, key)
	o.mu.Unlock()
	if ok {
		h.cancel()
		<-h.done
	}
}
