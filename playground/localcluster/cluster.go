package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/supervisor"
)

// Info describes a running cluster (kubeconfig, addresses, sites).
type Info = supervisor.Info

// Cluster is a running local cluster.
type Cluster struct {
	ID       string // also the name of the core network namespace
	StateDir string
	Info     Info
	// Config and Client reach the API server from the host.
	Config *rest.Config
	Client kubernetes.Interface

	opts     Options
	start    time.Time
	ownState bool
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string
	exited   chan struct{}
	ctl      *supervisor.Client
	nsInodes map[uint64]bool
}

// Kubeconfig is the path of the kubeconfig for host tools and tests.
func (c *Cluster) Kubeconfig() string { return c.Info.Kubeconfig }

func (c *Cluster) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Info.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	c.ctl = supervisor.NewClient(c.Info.Socket)
	if c.ID == "" {
		c.ID = c.Info.NetNS
	}
	return nil
}

func attachInfo(stateDir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, supervisor.InfoFile))
	if err != nil {
		return nil, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("decode %s: %w", supervisor.InfoFile, err)
	}
	return &info, nil
}

// Attach returns the cluster running from stateDir (started by another
// process, such as "playground up -d").
func Attach(stateDir string) (*Cluster, error) {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	info, err := attachInfo(abs)
	if err != nil {
		return nil, fmt.Errorf("no running cluster in %s: %w", abs, err)
	}
	c := &Cluster{StateDir: abs, Info: *info, ID: info.NetNS}
	return c, c.connect()
}

// Running reports whether a cluster runs from stateDir, with its
// supervisor's PID.
func Running(stateDir string) (int, bool) {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return 0, false
	}
	info, err := attachInfo(abs)
	if err != nil || info.SupervisorPID <= 0 {
		return 0, false
	}
	return info.SupervisorPID, processAlive(info.SupervisorPID)
}

// Done is closed when the supervisor that Up started exits (after a down
// from another process, say). It is nil for an attached cluster.
func (c *Cluster) Done() <-chan struct{} { return c.exited }

// KeepStateOnDown makes Down keep the state folder (logs, Pod folders),
// say because a test failed.
func (c *Cluster) KeepStateOnDown() { c.opts.KeepState = true }

// Down stops the cluster and removes everything it made, then checks that
// nothing is left; a leftover is an error. A state folder that Up made
// itself is removed too.
func (c *Cluster) Down() error { return c.down(c.ownState && !c.opts.KeepState) }

func (c *Cluster) down(removeState bool) error {
	c.nsInodes = namespaceInodes(c.ID)
	c.stopSupervisor()
	supervisor.Cleanup(c.ID, c.StateDir)
	if err := c.checkLeftovers(); err != nil {
		return err
	}
	if removeState {
		if err := os.RemoveAll(c.StateDir); err != nil {
			return fmt.Errorf("remove state folder: %w", err)
		}
	}
	return nil
}

// stopSupervisor asks the supervisor to tear down and waits for it; after
// 45 s it is killed and Cleanup does the rest.
func (c *Cluster) stopSupervisor() {
	pid := c.Info.SupervisorPID
	if c.cmd != nil {
		pid = c.cmd.Process.Pid
	}
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if c.exited != nil {
			select {
			case <-c.exited:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !processAlive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if c.exited != nil {
		<-c.exited
	}
}

// Exec runs argv inside the core network namespace, where every Pod IP,
// Service IP and the DNS servers are reachable, and returns its output.
func (c *Cluster) Exec(ctx context.Context, argv ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", c.ID}, argv...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s in netns %s: %w: %s", strings.Join(argv, " "), c.ID, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Kubectl runs the pinned kubectl against the cluster.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	bin := filepath.Join(defaultCache(), "kube", KubeVersion, "kubectl")
	if c.opts.CacheDir != "" {
		bin = filepath.Join(c.opts.KubeBinDir(), "kubectl")
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig=" + c.Info.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Dig asks the cluster's BIND server for name's records of type typ (A by
// default) with dig, and returns the answers.
func (c *Cluster) Dig(ctx context.Context, name, typ string) ([]string, error) {
	if typ == "" {
		typ = "A"
	}
	out, err := c.Exec(ctx, "dig", "+short", "+time=1", "+tries=1", "@"+c.Info.DNSServer, name, typ)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Leftovers lists what the cluster left behind on the machine, if anything.
func (c *Cluster) Leftovers() []string {
	var out []string
	for _, n := range nsutil.List(c.ID) {
		out = append(out, "network namespace "+n)
	}
	for _, pid := range processesIn(c.nsInodes) {
		out = append(out, fmt.Sprintf("process %d in a cluster namespace", pid))
	}
	if c.Info.SupervisorPID > 0 && processAlive(c.Info.SupervisorPID) && c.cmd == nil {
		out = append(out, fmt.Sprintf("supervisor process %d", c.Info.SupervisorPID))
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, c.ID) || strings.Contains(line, c.StateDir) {
				out = append(out, "mount "+line)
			}
		}
	}
	if _, err := os.Stat(filepath.Join("/dev/shm", c.ID+"-etcd")); err == nil {
		out = append(out, "etcd data /dev/shm/"+c.ID+"-etcd")
	}
	if b, err := exec.Command("nft", "list", "tables").Output(); err == nil && strings.Contains(string(b), "brlc_") {
		out = append(out, "nft table in the host namespace: "+strings.TrimSpace(string(b)))
	}
	return out
}

func (c *Cluster) checkLeftovers() error {
	var left []string
	for i := 0; i < 50; i++ { // killed processes take a moment to be reaped
		if left = c.Leftovers(); len(left) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("down left things behind:\n  %s", strings.Join(left, "\n  "))
}
