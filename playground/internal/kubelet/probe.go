package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/podexec"
	"github.com/shipstream/bloodraven/playground/internal/proc"
)

// probe runs the startup, readiness and liveness probes of one run of the
// container. Without a readiness probe the container is ready once started.
func (c *container) probe(ctx context.Context, p *proc.Proc) {
	if sp := c.spec.StartupProbe; sp != nil {
		if !c.loop(ctx, sp, func(ok bool) bool { return !ok }, func() { c.killUnhealthy(p, "startup") }) {
			return
		}
	}
	c.mu.Lock()
	c.started = true
	if c.spec.ReadinessProbe == nil {
		c.ready = true
	}
	c.mu.Unlock()
	c.r.notify()
	if lp := c.spec.LivenessProbe; lp != nil {
		go c.loop(ctx, lp, func(bool) bool { return true }, func() { c.killUnhealthy(p, "liveness") })
	}
	if rp := c.spec.ReadinessProbe; rp != nil {
		c.loop(ctx, rp, func(ok bool) bool { c.setReady(ok); return true }, nil)
	}
}

// loop runs pr by its timing. onResult gets each settled result (after the
// success or failure threshold) and says whether to go on; onFail runs once
// the failure threshold is reached. It returns true when onResult stopped it.
func (c *container) loop(ctx context.Context, pr *corev1.Probe, onResult func(bool) bool, onFail func()) bool {
	period := secondsOr(pr.PeriodSeconds, 10)
	timeout := secondsOr(pr.TimeoutSeconds, 1)
	if !sleepCtx(ctx, time.Duration(pr.InitialDelaySeconds)*time.Second) {
		return false
	}
	fails, oks := 0, 0
	for {
		ok := c.check(ctx, pr, timeout)
		if ctx.Err() != nil {
			return false
		}
		if ok {
			oks, fails = oks+1, 0
			if oks >= int(max(pr.SuccessThreshold, 1)) && !onResult(true) {
				return true
			}
		} else {
			fails, oks = fails+1, 0
			if fails >= int(max(pr.FailureThreshold, 3*boolInt(pr.FailureThreshold == 0))) {
				if onFail != nil {
					onFail()
					return false
				}
				if !onResult(false) {
					return true
				}
			}
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func secondsOr(v, def int32) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

func (c *container) setReady(ok bool) {
	c.mu.Lock()
	changed := c.ready != ok
	c.ready = ok
	c.mu.Unlock()
	if changed {
		c.r.notify()
	}
}

func (c *container) killUnhealthy(p *proc.Proc, which string) {
	c.r.pr.cfg.Logf("pod %s/%s: container %s failed its %s probe; restarting", c.r.pod.Namespace, c.r.pod.Name, c.spec.Name, which)
	c.mu.Lock()
	grace := c.grace
	c.mu.Unlock()
	go p.Stop(grace)
}

// check runs one probe attempt.
func (c *container) check(ctx context.Context, pr *corev1.Probe, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case pr.Exec != nil:
		return c.execProbe(ctx, pr.Exec.Command) == nil
	case pr.TCPSocket != nil:
		conn, err := c.dial(ctx, pr.TCPSocket.Host, pr.TCPSocket.Port)
		if err == nil {
			conn.Close()
		}
		return err == nil
	case pr.HTTPGet != nil:
		return c.httpProbe(ctx, pr.HTTPGet) == nil
	}
	return true
}

// dial connects from the node's address (in the core namespace) to the Pod.
func (c *container) dial(ctx context.Context, host string, port intstr.IntOrString) (net.Conn, error) {
	if host == "" {
		host = c.r.ip()
	}
	n, err := c.port(port)
	if err != nil {
		return nil, err
	}
	var conn net.Conn
	err = nsutil.Do(c.r.pr.cfg.CoreNetNS, func() error {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: c.r.pr.cfg.NodeIP}}
		var err error
		conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(n)))
		return err
	})
	return conn, err
}

func (c *container) port(p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.spec.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.spec.Name, p.StrVal)
}

func (c *container) httpProbe(ctx context.Context, g *corev1.HTTPGetAction) error {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return c.dial(ctx, g.Host, g.Port)
		},
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet does
		DisableKeepAlives: true,
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://pod"+g.Path, nil)
	if err != nil {
		return err
	}
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("http probe: status %d", resp.StatusCode)
	}
	return nil
}

// execProbe runs argv inside the container's namespaces and reports a
// non-zero exit as an error.
func (c *container) execProbe(ctx context.Context, argv []string) error {
	out, err := c.execIn(ctx, argv)
	if err != nil {
		return fmt.Errorf("exec probe %v: %w: %s", argv, err, out)
	}
	return nil
}

// execIn runs argv inside the container's namespaces and returns its output.
func (c *container) execIn(ctx context.Context, argv []string) ([]byte, error) {
	spec, err := c.execSpec(argv)
	if err != nil {
		return nil, err
	}
	cmd, err := helperCmd(ctx, c.r.dir, spec)
	if err != nil {
		return nil, err
	}
	return cmd.CombinedOutput()
}

// helperCmd prepares the podexec helper for spec without starting it.
func helperCmd(ctx context.Context, dir string, spec podexec.Spec) (*exec.Cmd, error) {
	f, err := tempSpec(dir, spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, proc.Self)
	cmd.Env = []string{proc.RoleEnv + "=" + proc.RolePodExec, proc.SpecEnv + "=" + f}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd, nil
}
