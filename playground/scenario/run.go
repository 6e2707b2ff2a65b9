package scenario

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/load"
)

// LoadOptions choose how the writers reach the group.
type LoadOptions struct {
	// Primary sends the writers to the -primary Service instead of the
	// group's DNS name.
	Primary bool
	// Writers is the number of writers (2 when zero).
	Writers int
	// FreshProbes has the prober open a new session for every probe.
	FreshProbes bool
}

// Load is a running load: writers and the prober.
type Load struct {
	g      *Group
	ids    *load.IDs
	acct   load.Account
	client *load.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	hist    load.History
	Started time.Time
	// live: the writers' and the prober's latest acknowledged and failed
	// attempts per site, as they happen.
	lastAck   map[string]load.Attempt
	lastProbe map[string]load.Attempt
	lastFail  load.Attempt
	// writes are the writers' attempts as they ended (hist.Attempts is
	// filled only when the writers stop).
	writes []load.Attempt
}

// seen records an attempt as it ends.
func (l *Load) seen(a load.Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.Writer == "probe" {
		l.lastProbe[a.Site] = a
	} else {
		l.writes = append(l.writes, a)
		if !a.OK {
			l.lastFail = a
		}
	}
	if a.OK && a.End.After(l.lastAck[a.Site+"/"+a.Writer[:1]].End) {
		l.lastAck[a.Site+"/"+a.Writer[:1]] = a
	}
}

// writerAttempts returns the writers' attempts that ended so far.
func (l *Load) writerAttempts() []load.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]load.Attempt(nil), l.writes...)
}

// lastFailure describes the writers' latest failed attempt.
func (l *Load) lastFailure() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.lastFail
	return fmt.Sprintf("id %d to %s (%s) at %s: %s", a.ID, a.Addr, a.Site, a.End.Format("15:04:05.000"), a.Err)
}

// WaitAck waits until a writer (probe false) or the prober (probe true) has
// an acknowledged write on site that started after t, and returns it.
func (l *Load) WaitAck(ctx context.Context, site string, probe bool, t time.Time, within time.Duration) (load.Attempt, error) {
	key := site + "/w"
	if probe {
		key = site + "/p"
	}
	deadline := time.Now().Add(within)
	for {
		l.mu.Lock()
		a, ok := l.lastAck[key]
		l.mu.Unlock()
		if ok && a.Start.After(t) {
			return a, nil
		}
		if time.Now().After(deadline) {
			return load.Attempt{}, fmt.Errorf("no acknowledged write on %s (%s) within %s; last failure: %s",
				site, key, within, l.lastFailure())
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return load.Attempt{}, err
		}
	}
}

// Account reads the group's application account from its Secret.
func (g *Group) Account(ctx context.Context) (load.Account, error) {
	mg, err := g.Get(ctx)
	if err != nil {
		return load.Account{}, err
	}
	name := routing.CredentialSecretName(mg, routing.AccountApplication)
	var sec *corev1.Secret
	if sec, err = g.e.C.Client.CoreV1().Secrets(g.NS).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return load.Account{}, fmt.Errorf("application secret %s: %w", name, err)
	}
	a := load.Account{User: string(sec.Data[routing.SecretKeyUsername]),
		Password: string(sec.Data[routing.SecretKeyPassword]), Database: string(sec.Data[routing.SecretKeyDatabase])}
	if a.Database == "" {
		a.Database = routing.DefaultAppDatabase
	}
	return a, nil
}

// client returns a load client with the given per-call timeout.
func (g *Group) client(acct load.Account, timeout time.Duration) *load.Client {
	sites := map[uint32]string{}
	for _, s := range g.Sites {
		sites[routing.ServerID(s)] = s
	}
	return &load.Client{Dial: g.e.C.Dial, Account: acct, ServerSites: sites, Timeout: timeout}
}

// DNSTarget resolves the group's name at the zone's DNS server.
func (g *Group) DNSTarget() load.DNSName {
	return load.DNSName{Server: net.JoinHostPort(g.e.C.Info.DNSServer, "53"), Name: g.Hostname,
		Port: routing.MySQLPort, Dial: g.e.C.Dial}
}

// StartLoad creates the tables and starts the writers and the prober.
func (g *Group) StartLoad(ctx context.Context, o LoadOptions) (*Load, error) {
	acct, err := g.Account(ctx)
	if err != nil {
		return nil, err
	}
	var target load.Target = g.DNSTarget()
	if o.Primary {
		ip, err := g.ClusterIP(ctx, routing.PrimaryServiceName(g.Name))
		if err != nil {
			return nil, err
		}
		target = load.Fixed(net.JoinHostPort(ip, strconv.Itoa(routing.MySQLPort)))
	}
	l := &Load{g: g, ids: load.NewIDs(), acct: acct, client: g.client(acct, time.Second),
		lastAck: map[string]load.Attempt{}, lastProbe: map[string]load.Attempt{}}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := load.Setup(sctx, l.client, target); err != nil {
		return nil, fmt.Errorf("load tables: %w", err)
	}
	if o.Writers == 0 {
		o.Writers = 2
	}
	w := &load.Writers{Client: l.client, Target: target, IDs: l.ids, N: o.Writers, Pause: 20 * time.Millisecond,
		OnAttempt: l.seen}
	p := &load.Prober{Client: g.client(acct, 500*time.Millisecond), IDs: l.ids, Sites: g.SiteAddrs,
		Interval: 100 * time.Millisecond, Fresh: o.FreshProbes, OnAttempt: l.seen}
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel, l.Started = rcancel, time.Now()
	l.wg.Go(func() { a := w.Run(rctx); l.mu.Lock(); l.hist.Attempts = append(l.hist.Attempts, a...); l.mu.Unlock() })
	l.wg.Go(func() { p := p.Run(rctx); l.mu.Lock(); l.hist.Probes = append(l.hist.Probes, p...); l.mu.Unlock() })
	g.e.Logf("load: %d writers through %s, prober on every site", o.Writers, target)
	return l, nil
}

// Mark records a named moment and returns it.
func (l *Load) Mark(name string) time.Time {
	now := time.Now()
	l.mu.Lock()
	l.hist.Mark(name, now)
	l.mu.Unlock()
	l.g.e.Logf("mark %s", name)
	return now
}

// AddProbes records direct writes that a scenario made on its own (a
// pool's burst, say) with the prober's, as they count alike: evidence of
// which site accepted writes when, and ids to find in the final read.
func (l *Load) AddProbes(as []load.Attempt) {
	for _, a := range as {
		l.seen(a)
	}
	l.mu.Lock()
	l.hist.Probes = append(l.hist.Probes, as...)
	l.mu.Unlock()
}

// Stop ends the load and reads every id back from the active site.
func (l *Load) Stop(ctx context.Context) (*load.History, error) {
	l.cancel()
	l.wg.Wait()
	byStart := func(as []load.Attempt) func(i, j int) bool {
		return func(i, j int) bool { return as[i].Start.Before(as[j].Start) }
	}
	sort.SliceStable(l.hist.Probes, byStart(l.hist.Probes))
	mg, err := l.g.Get(ctx)
	if err != nil {
		return &l.hist, err
	}
	addr := l.g.SiteAddrs()[mg.Status.ActiveSite]
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := load.ReadFinal(rctx, l.client, addr, l.ids.Base(), &l.hist); err != nil {
		return &l.hist, fmt.Errorf("read back from %s: %w", mg.Status.ActiveSite, err)
	}
	return &l.hist, nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
