package scenario

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/install"
)

// Timings are the group's detection and fencing settings. A zero field
// leaves the spec's default.
type Timings struct {
	PollInterval      time.Duration
	FailureThreshold  int
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	Cooldown          time.Duration
}

// TestTimings are the short timings of the scenarios.
var TestTimings = Timings{PollInterval: time.Second, FailureThreshold: 2, LeaseTimeout: 6 * time.Second,
	PeerCheckInterval: 2 * time.Second, Cooldown: time.Minute}

// DefaultTimings are the spec's defaults, written out.
var DefaultTimings = Timings{PollInterval: 2 * time.Second, FailureThreshold: 3, LeaseTimeout: 20 * time.Second,
	PeerCheckInterval: 5 * time.Second, Cooldown: 5 * time.Minute}

// Sites of a scenario's group unless its Plan names others; the first is
// the initial primary.
var Sites = []string{"site-a", "site-b"}

// ThirdSite is the local cluster's third site node, for the scenarios whose
// group has three sites (Sites plus ThirdSite).
const ThirdSite = "site-c"

const groupName = "orders"

// Group is one MysqlFailoverGroup of a scenario, in its own namespace.
type Group struct {
	e        *Env
	NS       string
	Name     string
	Hostname string
	T        Timings
	// Sites are the group's sites in spec order; the first is the initial primary.
	Sites []string
	// SemiSync is the group's semi-sync mode: off (or empty), preferred or required.
	SemiSync string

	mu      sync.Mutex
	addrs   map[string]string
	addrsAt time.Time
}

// spec renders the group's timings and semi-sync mode; defaults leaves
// the spec's default timings.
func spec(t Timings, defaults bool, semiSync string) (string, error) {
	out, err := install.MySQLSpec("", semiSync)
	if err != nil || defaults {
		return out, err
	}
	return out + fmt.Sprintf("  pollInterval: %s\n  failureThreshold: %d\n  failoverCooldown: %s\n"+
		"  sidecar: {leaseTimeout: %s, peerCheckInterval: %s}\n",
		t.PollInterval, t.FailureThreshold, t.Cooldown, t.LeaseTimeout, t.PeerCheckInterval), nil
}

// NewGroup creates a group on sites (Sites when nil) in a fresh namespace
// named after the scenario and waits until it is settled on the first site:
// Ready at generation 1, the other sites replicating, DNS pointing there. With t zero the spec's
// defaults apply (and t reads DefaultTimings). semiSync is the semi-sync
// mode (empty: off); with it on, settled also means that the active site's
// commits wait for a replica. extra is appended to the spec.
//
// A new group must not fail over while it boots: the operator does not fail
// over from an active site that never answered, however late its Pod comes
// up. Should it all the same, that is not what a scenario tests, so the
// group is then made again in another namespace (at most three tries), and
// each such bootstrap failover is reported through Env.BootstrapFailovers.
func (e *Env) NewGroup(ctx context.Context, name string, sites []string, t Timings, semiSync, extra string) (*Group, error) {
	defaults := t == (Timings{})
	if defaults {
		t = DefaultTimings
	}
	sp, err := spec(t, defaults, semiSync)
	if err != nil {
		return nil, err
	}
	if sites == nil {
		sites = Sites
	}
	for range 3 {
		g := &Group{e: e, NS: namespace(name), Name: groupName, T: t, Sites: sites, SemiSync: semiSync}
		g.Hostname = g.NS + ".bloodraven.test"
		ig := install.Group{Namespace: g.NS, Name: g.Name, Sites: sites, Hostname: g.Hostname, Spec: sp + extra}
		if err = install.Create(ctx, e.C, ig); err != nil {
			return nil, err
		}
		start := time.Now()
		if err = g.settle(ctx); err == nil {
			e.Logf("group %s/%s settled on %s in %.1fs", g.NS, g.Name, sites[0], time.Since(start).Seconds())
			return g, nil
		}
		_ = g.Delete(ctx)
		if !errors.Is(err, errBootstrapFailover) {
			return nil, err
		}
		e.BootstrapFailovers = append(e.BootstrapFailovers, fmt.Sprintf("%s: %v", g.NS, err))
		e.Logf("group %s failed over while booting, making another: %v", g.NS, err)
	}
	return nil, err
}

var errBootstrapFailover = errors.New("failed over while booting")

// settle waits for the group to be healthy on its first site, with the
// others replicating and DNS there, and to stay so for a few polls.
func (g *Group) settle(ctx context.Context) error {
	_, err := g.Wait(ctx, "group settled on "+g.Sites[0], 150*time.Second, func(mg *v1alpha1.MysqlFailoverGroup) error {
		if st := mg.Status; st.TopologyGeneration > 1 {
			return fmt.Errorf("%w: active %s generation %d", errBootstrapFailover, st.ActiveSite, st.TopologyGeneration)
		}
		if err := install.Ready(mg, g.Sites[0], 1); err != nil {
			return err
		}
		for _, s := range g.Sites[1:] {
			if err := replicating(s)(mg); err != nil {
				return err
			}
		}
		return install.SemiSyncSettled(mg)
	})
	if errors.Is(err, errBootstrapFailover) {
		return err
	}
	if err == nil {
		err = g.WaitDNS(ctx, g.Sites[0], 30*time.Second)
	}
	if err == nil {
		_ = sleepCtx(ctx, time.Duration(g.T.FailureThreshold+1)*g.T.PollInterval)
		mg, gerr := g.Get(ctx)
		if gerr != nil {
			return gerr
		}
		if st := mg.Status; st.TopologyGeneration > 1 {
			return fmt.Errorf("%w: active %s generation %d", errBootstrapFailover, st.ActiveSite, st.TopologyGeneration)
		}
	}
	return err
}

// Delete removes the group's namespace without waiting for it to go.
func (g *Group) Delete(ctx context.Context) error {
	_, err := g.e.C.Kubectl(ctx, "delete", "namespace", g.NS, "--wait=false")
	return err
}

// Get reads the group from the API server.
func (g *Group) Get(ctx context.Context) (*v1alpha1.MysqlFailoverGroup, error) {
	return install.Get(ctx, g.e.C, g.NS, g.Name)
}

// Wait polls the group every 200 ms until cond holds or within runs out.
func (g *Group) Wait(ctx context.Context, what string, within time.Duration,
	cond func(*v1alpha1.MysqlFailoverGroup) error) (*v1alpha1.MysqlFailoverGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		mg, err := g.Get(ctx)
		if err == nil {
			if err = cond(mg); err == nil {
				return mg, nil
			} else if errors.Is(err, errBootstrapFailover) || errors.Is(err, errStopWaiting) {
				return nil, err
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: not within %s: %w", what, within, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// WaitActive waits until the group is Ready with site active at generation
// gen, no failover in flight, and site seen writable (Ready alone can lag
// the failover intent that names the new site).
func (g *Group) WaitActive(ctx context.Context, site string, gen int64, within time.Duration) error {
	_, err := g.Wait(ctx, fmt.Sprintf("group Ready on %s at generation %d", site, gen), within,
		func(mg *v1alpha1.MysqlFailoverGroup) error {
			if err := install.Ready(mg, site, gen); err != nil {
				return err
			}
			if mg.Status.Failover != nil {
				return fmt.Errorf("failover in flight at step %q", mg.Status.Failover.Step)
			}
			for _, s := range mg.Status.Sites {
				if s.Name == site && s.State != v1alpha1.StateWritable {
					return fmt.Errorf("%s is %s", site, s.State)
				}
			}
			return nil
		})
	return err
}

// WaitDNS waits until the group's name resolves to site's Service.
func (g *Group) WaitDNS(ctx context.Context, site string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		want, err := g.ClusterIP(ctx, routing.SiteName(g.Name, site))
		var got []string
		if err == nil {
			got, err = g.e.C.Dig(ctx, g.Hostname, "A")
			if err == nil && strings.Join(got, ",") == want {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("DNS %s = %v (%v), want %s's Service %s", g.Hostname, got, err, site, want)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// ClusterIP returns a Service's ClusterIP.
func (g *Group) ClusterIP(ctx context.Context, svc string) (string, error) {
	s, err := g.e.C.Client.CoreV1().Services(g.NS).Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("service %s: %w", svc, err)
	}
	return s.Spec.ClusterIP, nil
}

// Pod returns the running Pod of a site: its name and IP.
func (g *Group) Pod(ctx context.Context, site string) (string, string, error) {
	pods, err := g.e.C.Client.CoreV1().Pods(g.NS).List(ctx, metav1.ListOptions{
		LabelSelector: v1alpha1.LabelSite + "=" + site})
	if err != nil {
		return "", "", fmt.Errorf("pods of %s: %w", site, err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && p.Status.Phase == "Running" {
			return p.Name, p.Status.PodIP, nil
		}
	}
	return "", "", fmt.Errorf("no running Pod on %s", site)
}

// SiteAddrs returns each site's mysqld address (its Pod IP), read at most
// every half second.
func (g *Group) SiteAddrs() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.addrsAt) < 500*time.Millisecond {
		return g.addrs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	next := map[string]string{}
	for _, s := range g.Sites {
		next[s] = g.addrs[s] // keep the last known address when the list fails
		if _, ip, err := g.Pod(ctx, s); err == nil {
			next[s] = net.JoinHostPort(ip, strconv.Itoa(routing.MySQLPort))
		}
	}
	g.addrs, g.addrsAt = next, time.Now()
	return next
}
