package localcluster

import (
	"bufio"
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

	"github.com/shipstream/bloodraven/playground/internal/proc"
	"github.com/shipstream/bloodraven/playground/internal/supervisor"
)

// Up starts a cluster and returns once it is ready: nodes registered, the
// default service account present, DNS answering. Progress lines go to
// opts.Progress. On failure nothing is left behind.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := preflight(&opts); err != nil {
		return nil, err
	}
	for _, id := range supervisor.CleanupStale() {
		fmt.Fprintf(opts.Progress, "localcluster: removed stale cluster %s\n", id)
	}
	c := &Cluster{ID: "brlc-" + randomID(), opts: opts, start: time.Now()}
	if err := c.prepareState(); err != nil {
		return nil, err
	}
	cfg, err := c.supervisorConfig()
	if err != nil {
		return nil, c.fail(err)
	}
	if err := c.startSupervisor(cfg); err != nil {
		return nil, c.fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if err := c.waitReady(ctx); err != nil {
		return nil, c.fail(err)
	}
	if err := c.connect(); err != nil {
		return nil, c.fail(err)
	}
	return c, nil
}

func (c *Cluster) prepareState() error {
	if c.opts.StateDir == "" {
		dir, err := os.MkdirTemp("", "brlc-")
		if err != nil {
			return fmt.Errorf("state folder: %w", err)
		}
		c.opts.StateDir, c.ownState = dir, true
	}
	abs, err := filepath.Abs(c.opts.StateDir)
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	c.StateDir = abs
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	if st, err := attachInfo(abs); err == nil && processAlive(st.SupervisorPID) {
		return fmt.Errorf("state folder %s belongs to a running cluster (pid %d): run down first", abs, st.SupervisorPID)
	}
	// A new cluster starts from an empty etcd: what an earlier one left here
	// (volumes, logs, a DNS journal with foreign owners) would only mislead.
	for _, sub := range []string{"pki", "logs", "nodes", "volumes", "dns"} {
		if err := os.RemoveAll(filepath.Join(abs, sub)); err != nil {
			return fmt.Errorf("clear state folder: %w", err)
		}
	}
	return nil
}

func (c *Cluster) supervisorConfig() (string, error) {
	o := c.opts
	cfg := supervisor.Config{
		ClusterID: c.ID, StateDir: c.StateDir, Sites: o.Sites, KubeBinDir: o.KubeBinDir(),
		Zone: o.Zone, Images: o.Images, OperatorSelector: o.OperatorSelector, CRDs: o.CRDs,
		WatchStdin: !o.Detach, BackoffInitial: o.BackoffInitial, BackoffMax: o.BackoffMax, Verbose: o.Verbose,
		VolumeRefresh: o.VolumeRefresh,
	}
	if !o.NoDNS {
		crd, err := dnsEndpointCRD(&o)
		if err != nil {
			return "", err
		}
		cfg.CRDs = append([]string{crd}, cfg.CRDs...)
		cfg.ExternalDNS = o.ExternalDNSBin()
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode supervisor config: %w", err)
	}
	path := filepath.Join(c.StateDir, supervisor.ConfigFile)
	return path, os.WriteFile(path, b, 0o644)
}

// startSupervisor re-executes this binary as the supervisor. Without Detach
// its stdin is a pipe from us: when we die, it sees EOF and tears down.
func (c *Cluster) startSupervisor(cfgPath string) error {
	logf, err := os.OpenFile(filepath.Join(c.StateDir, supervisor.SupervisorLog), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("supervisor log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(proc.Self)
	cmd.Env = append(os.Environ(), proc.RoleEnv+"="+roleSupervise, proc.SpecEnv+"="+cfgPath)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c.opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else if c.stdin, err = cmd.StdinPipe(); err != nil {
		return fmt.Errorf("supervisor stdin: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("supervisor stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	c.cmd, c.lines = cmd, make(chan string, 64)
	c.exited = make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		_ = cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// waitReady relays progress until the supervisor reports readiness.
func (c *Cluster) waitReady(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %w%s", ctx.Err(), c.logTail())
		case line, ok := <-c.lines:
			if !ok {
				return fmt.Errorf("supervisor exited before the cluster was ready%s", c.logTail())
			}
			if msg, ok := strings.CutPrefix(line, supervisor.ProgressPrefix); ok {
				fmt.Fprintf(c.opts.Progress, "localcluster: %s\n", msg)
				continue
			}
			if js, ok := strings.CutPrefix(line, supervisor.ReadyPrefix); ok {
				if err := json.Unmarshal([]byte(js), &c.Info); err != nil {
					return fmt.Errorf("decode readiness: %w", err)
				}
				fmt.Fprintf(c.opts.Progress, "localcluster: up in %.1fs; export KUBECONFIG=%s\n", time.Since(c.start).Seconds(), c.Info.Kubeconfig)
				go drain(c.lines, c.opts.Progress)
				return nil
			}
		}
	}
}

func drain(lines <-chan string, w io.Writer) {
	for line := range lines {
		if msg, ok := strings.CutPrefix(line, supervisor.ProgressPrefix); ok {
			fmt.Fprintf(w, "localcluster: %s\n", msg)
		}
	}
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.StateDir, supervisor.SupervisorLog))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return fmt.Sprintf("\nsupervisor log (%s):\n  %s", filepath.Join(c.StateDir, supervisor.SupervisorLog), strings.Join(lines, "\n  "))
}

// fail tears down a half-started cluster and returns err.
func (c *Cluster) fail(err error) error {
	if derr := c.down(false); derr != nil {
		return fmt.Errorf("%w (and cleanup: %v)", err, derr)
	}
	return err
}

func processAlive(pid int) bool { return supervisor.Alive(pid) }
