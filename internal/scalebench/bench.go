package scalebench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Namespace holds every group of the bench.
const Namespace = "scale"

// Config sizes one run.
type Config struct {
	Groups  int
	Poll    time.Duration // each group's pollInterval
	Settle  time.Duration // bound of the wait until every group is observed
	Measure time.Duration // the measured window
	Dir     string        // scratch: binary, kubeconfig, hosts, log
	Logf    func(format string, args ...any)
}

// Result is what a run measured. Figures holds the lines to print.
type Result struct {
	Groups        int
	Startup       time.Duration // operator start to every group observed
	Passes        float64       // timed passes in the window, all groups
	LagP50        time.Duration
	LagP99        time.Duration
	CPUCores      float64
	RSSMiB        float64
	StatusWrites  float64 // per second
	APIRequests   float64 // the operator's requests to the API server, per second
	Unknown       map[string][]string
	Served        map[string]int
	Unobserved    []string // groups whose status lacks an observed state of every site
	OperatorLog   string
	WindowSeconds float64
}

// Figures are the bench's output lines, `<name> <value> <unit>`.
func (r *Result) Figures() []string {
	return []string{
		"# sidecars absent: no reports, nudges or peer traffic; sites start writable/replicating",
		fmt.Sprintf("scale-groups %d groups", r.Groups),
		fmt.Sprintf("startup-all-observed %.1f s", r.Startup.Seconds()),
		fmt.Sprintf("poll-lag-p50 %.1f ms", float64(r.LagP50.Microseconds())/1000),
		fmt.Sprintf("poll-lag-p99 %.1f ms", float64(r.LagP99.Microseconds())/1000),
		fmt.Sprintf("operator-cpu-cores %.3f cores", r.CPUCores),
		fmt.Sprintf("operator-rss-mib %.1f MiB", r.RSSMiB),
		fmt.Sprintf("apiserver-status-writes-per-second %.2f writes/s", r.StatusWrites),
		fmt.Sprintf("operator-api-requests-per-second %.1f requests/s", r.APIRequests),
		"# failover-rto-at-scale left: an emergency failover needs a sidecar's fence evidence and a Pod that can go, neither present here",
	}
}

// Run starts the API server, the stand-ins and the real operator, waits
// until every group is observed, then measures for cfg.Measure.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	logf := cfg.Logf
	cl, err := StartCluster(cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cl.Stop()) }()
	for _, ns := range []string{OperatorNamespace, Namespace} {
		if err := cl.CreateNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	fleet, err := StartFleet(Namespace, cfg.Groups, DefaultAccounts.Operator.Username, DefaultAccounts.Operator.Password)
	if err != nil {
		return nil, err
	}
	defer fleet.Close()
	for _, g := range fleet.Groups {
		if err := cl.CreateGroup(ctx, Namespace, g, cfg.Poll.String(), DefaultAccounts); err != nil {
			return nil, err
		}
	}
	logf("%d groups, %d stand-ins created", cfg.Groups, len(fleet.Sites))
	bin, err := BuildOperator(cfg.Dir)
	if err != nil {
		return nil, err
	}
	bg, stop := context.WithCancel(ctx)
	defer stop()
	go ServeCertificates(bg, cl.Client, fleet)
	go keepWriting(bg, fleet)
	writes := WatchStatus(bg, cl.Client, Namespace)
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	op, err := StartOperator(cfg.Dir, bin, cl.Kubeconfig, fleet.Hosts(), ports[0], ports[1])
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	res = &Result{Groups: cfg.Groups, OperatorLog: op.Log}
	started := time.Now()
	err = waitObserved(ctx, cl.Client, op, fleet, cfg.Settle)
	res.Startup = time.Since(started)
	if err != nil {
		res.Unobserved = unobserved(ctx, cl.Client, fleet)
		res.Unknown = fleet.Unknown()
		return res, err
	}
	logf("every group observed %s after the operator started; measuring for %s", res.Startup, cfg.Measure)
	return res, measure(ctx, res, op, writes, fleet, cl.Client, cfg.Measure)
}

func measure(ctx context.Context, res *Result, op *Operator, writes *StatusWrites, fleet *Fleet, c client.Client,
	window time.Duration) error {
	h0, err := Scrape(op.MetricsAddr, LagMetric)
	if err != nil {
		return err
	}
	cpu0, err := op.CPUSeconds()
	if err != nil {
		return err
	}
	r0, err := ScrapeSum(op.MetricsAddr, RequestsMetric)
	if err != nil {
		return err
	}
	w0, t0 := writes.Count(), time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(window):
	}
	h1, err := Scrape(op.MetricsAddr, LagMetric)
	if err != nil {
		return err
	}
	cpu1, err := op.CPUSeconds()
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	r1, err := ScrapeSum(op.MetricsAddr, RequestsMetric)
	if err != nil {
		return err
	}
	res.APIRequests = (r1 - r0) / secs
	if res.RSSMiB, err = op.RSSMiB(); err != nil {
		return err
	}
	lag := h1.Sub(h0)
	res.WindowSeconds, res.Passes = secs, lag.Total()
	res.LagP50 = time.Duration(lag.Quantile(0.5) * float64(time.Second))
	res.LagP99 = time.Duration(lag.Quantile(0.99) * float64(time.Second))
	res.CPUCores = (cpu1 - cpu0) / secs
	res.StatusWrites = float64(writes.Count()-w0) / secs
	res.Unknown, res.Served = fleet.Unknown(), fleet.Served()
	res.Unobserved = unobserved(ctx, c, fleet)
	return nil
}

// keepWriting commits a transaction on every primary ten times a second,
// so every GTID position moves as a busy group's would.
func keepWriting(ctx context.Context, f *Fleet) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.WriteAll()
		}
	}
}

// waitObserved waits until every group's status shows each site observed
// in its steady-state role, bounded by limit.
func waitObserved(ctx context.Context, c client.Client, op *Operator, f *Fleet, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		left := unobserved(ctx, c, f)
		if len(left) == 0 {
			return nil
		}
		if op.Exited() {
			return fmt.Errorf("operator exited; see %s", op.Log)
		}
		if time.Now().After(deadline) {
			var g v1alpha1.MysqlFailoverGroup
			_ = c.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: left[0]}, &g)
			a := f.Site(left[0], Sites[0])
			n, failed := a.DB.Sessions()
			return fmt.Errorf("%d of %d groups not observed after %s (first: %s, status %+v; its primary "+
				"has a certificate: %v, answered %v, %d sessions, failed handshakes %q); see %s", len(left),
				len(f.Groups), limit, left[0], g.Status, a.DB.HasCertificate(), a.DB.Served(), n, failed, op.Log)
		}
		time.Sleep(time.Second)
	}
}

// unobserved lists the groups whose status lacks the primary observed
// writable and the replica observed read-only and replicating.
func unobserved(ctx context.Context, c client.Client, f *Fleet) []string {
	var list v1alpha1.MysqlFailoverGroupList
	if err := c.List(ctx, &list, client.InNamespace(f.NS)); err != nil {
		return f.Groups
	}
	ok := map[string]bool{}
	for _, g := range list.Items {
		ok[g.Name] = steady(&g.Status)
	}
	var out []string
	for _, g := range f.Groups {
		if !ok[g] {
			out = append(out, g)
		}
	}
	return out
}

func steady(st *v1alpha1.MysqlFailoverGroupStatus) bool {
	want := map[string]bool{}
	for _, s := range st.Sites {
		switch {
		case s.Name == Sites[0] && s.State == v1alpha1.StateWritable && s.GtidExecuted != "":
			want[s.Name] = true
		case s.Name == Sites[1] && s.State == v1alpha1.StateReadOnly && s.Replicating && s.GtidExecuted != "":
			want[s.Name] = true
		}
	}
	return st.ActiveSite == Sites[0] && len(want) == len(Sites)
}

// freePorts finds n free loopback ports.
func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
