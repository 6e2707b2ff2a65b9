package scalebench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
)

// BuildOperator builds cmd/operator into dir.
func BuildOperator(dir string) (string, error) {
	bin := filepath.Join(dir, "operator")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/operator")
	cmd.Dir = testbed.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build operator: %w: %s", err, out)
	}
	return bin, nil
}

// Operator is the running operator process.
type Operator struct {
	Cmd         *exec.Cmd
	MetricsAddr string
	Log         string
	done        chan struct{}
}

// StartOperator runs bin in a private mount namespace whose /etc/hosts is
// hosts (the Service names of the stand-ins), against kubeconfig.
func StartOperator(dir, bin, kubeconfig string, hosts []byte, metricsPort, apiPort int) (*Operator, error) {
	hostsFile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostsFile, hosts, 0o644); err != nil {
		return nil, fmt.Errorf("hosts file: %w", err)
	}
	o := &Operator{MetricsAddr: fmt.Sprintf("127.0.0.1:%d", metricsPort), Log: filepath.Join(dir, "operator.log"),
		done: make(chan struct{})}
	args := []string{"--leader-elect=false", "--metrics-bind-address=" + o.MetricsAddr,
		"--health-probe-bind-address=0", "--api-bind-address=0",
		fmt.Sprintf("--api-tls-bind-address=127.0.0.1:%d", apiPort), "--log-level=error"}
	// unshare execs sh, sh execs the operator: one process id throughout.
	script := `mount --bind "$1" /etc/hosts && shift && exec "$@"`
	o.Cmd = exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh",
		hostsFile, bin}, args...)...)
	o.Cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "POD_NAMESPACE="+OperatorNamespace, "POD_NAME=bench-operator")
	logf, err := os.Create(o.Log)
	if err != nil {
		return nil, fmt.Errorf("operator log: %w", err)
	}
	o.Cmd.Stdout, o.Cmd.Stderr = logf, logf
	if err := o.Cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start operator (needs root for unshare --mount): %w", err)
	}
	go func() { _ = o.Cmd.Wait(); _ = logf.Close(); close(o.done) }()
	return o, nil
}

// Exited reports whether the process has ended.
func (o *Operator) Exited() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// Stop ends the operator gracefully, then kills it.
func (o *Operator) Stop() {
	if o.Exited() {
		return
	}
	_ = o.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(10 * time.Second):
		_ = o.Cmd.Process.Kill()
		<-o.done
	}
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// CPUSeconds is the process's user plus system time (/proc/<pid>/stat).
func (o *Operator) CPUSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", o.Cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("operator cpu: %w", err)
	}
	// Fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("operator cpu: unreadable stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("operator cpu: short stat")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("operator cpu: %w", err)
	}
	return (utime + stime) / clockTicks, nil
}

// RSSMiB is the process's resident set (/proc/<pid>/status VmRSS).
func (o *Operator) RSSMiB() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", o.Cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("operator rss: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return 0, fmt.Errorf("operator rss: %w", err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("operator rss: no VmRSS")
}
