package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/shipstream/bloodraven/playground/internal/faults"
	"github.com/shipstream/bloodraven/playground/internal/kubelet"
	"github.com/shipstream/bloodraven/playground/internal/proc"
	"github.com/shipstream/bloodraven/playground/internal/proxy"
)

// Supervisor is one running cluster.
type Supervisor struct {
	cfg     *Config
	start   time.Time
	out     io.Writer
	ctx     context.Context
	cancel  context.CancelFunc
	info    Info
	rest    *rest.Config
	client  kubernetes.Interface
	procs   []*proc.Proc // control plane and DNS, in start order
	proxy   *proxy.Proxy
	dns     *proxy.DNS
	faults  *faults.Set
	stopAPI func()
	stopFwd func()

	mu    sync.Mutex
	nodes map[string]*kubelet.Node // running nodes by site
	down  map[string]bool          // stopped sites
}

// Run brings the cluster up, reports progress and readiness on out, serves
// until a signal (or EOF on stdin when configured), and tears down.
func Run(cfg *Config, out io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Supervisor{cfg: cfg, start: time.Now(), out: out, ctx: ctx, cancel: cancel,
		nodes: map[string]*kubelet.Node{}, down: map[string]bool{}}
	// Our stdout is a pipe to Up's caller, which may be gone: writes must
	// fail quietly rather than kill us before teardown.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	stop := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-stdinClosed(cfg.WatchStdin):
		}
		close(stop)
	}()
	err := s.up(ctx, stop)
	if err == nil {
		s.ready()
		<-stop
	}
	s.progress("stopping")
	s.teardown()
	return err
}

func stdinClosed(watch bool) <-chan struct{} {
	ch := make(chan struct{})
	if watch {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(ch) }()
	}
	return ch
}

func (s *Supervisor) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.out, "%s%s (%.1fs)\n", ProgressPrefix, msg, time.Since(s.start).Seconds())
}

// logf writes to the supervisor's log (its stderr): Pod events and errors.
func (s *Supervisor) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
}

// up runs every start step; stop aborts between steps.
func (s *Supervisor) up(ctx context.Context, stop <-chan struct{}) error {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"network namespace", s.setupNetwork},
		{"certificates", s.setupPKI},
		{"etcd", s.startEtcd},
		{"kube-apiserver", s.startAPIServer},
		{"controller-manager and scheduler", s.startControllers},
		{"service proxy, cluster DNS and volume provisioner", s.startServices},
		{"nodes", s.startNodes},
		{"BIND and external-dns", s.startDNS},
		{"control socket", s.startAPI},
		{"default service account", s.waitServiceAccount},
	}
	for _, st := range steps {
		select {
		case <-stop:
			return fmt.Errorf("interrupted before %s", st.name)
		default:
		}
		if err := st.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		s.progress("%s ready", st.name)
	}
	return nil
}

func (s *Supervisor) ready() {
	b, _ := json.Marshal(s.info)
	_ = os.WriteFile(s.cfg.path(InfoFile), b, 0o644)
	fmt.Fprintf(s.out, "%s%s\n", ReadyPrefix, b)
}

// teardown stops everything in reverse order and removes every namespace,
// table, mount point and file outside the state folder.
func (s *Supervisor) teardown() {
	if s.stopAPI != nil {
		s.stopAPI()
	}
	s.mu.Lock()
	nodes := s.nodes
	s.nodes = map[string]*kubelet.Node{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.Stop() }()
	}
	wg.Wait()
	if s.dns != nil {
		s.dns.Close()
	}
	s.cancel()
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].Stop(2 * time.Second)
	}
	if s.stopFwd != nil {
		s.stopFwd()
	}
	Cleanup(s.cfg.ClusterID, s.cfg.StateDir)
}
