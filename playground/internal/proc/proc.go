package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/podexec"
)

// RoleEnv selects what a re-executed binary does; SpecEnv carries its spec file.
const (
	RoleEnv = "BLOODRAVEN_LOCALCLUSTER_ROLE"
	SpecEnv = "BLOODRAVEN_LOCALCLUSTER_SPEC"
	// RolePodExec is the role of the helper that becomes a program.
	RolePodExec = "podexec"
)

// Self is the path of the running binary, resolved once at start-up.
var Self = func() string {
	p, err := os.Executable()
	if err != nil {
		return "/proc/self/exe"
	}
	return p
}()

// Spec describes one process to start.
type Spec struct {
	Name    string // for errors and logs
	Exec    podexec.Spec
	Log     string // file that receives stdout and stderr; appended to
	SpecDir string // where the helper's spec file is written
	Stdout  io.Writer
}

// Proc is a running (or finished) child.
type Proc struct {
	Name  string
	Pid   int
	Start time.Time
	done  chan struct{}
	state *os.ProcessState
	err   error
	mu    sync.Mutex
}

// Start launches spec through the podexec helper.
func Start(spec Spec) (*Proc, error) {
	specPath := filepath.Join(spec.SpecDir, spec.Name+".exec.json")
	if err := podexec.Write(specPath, spec.Exec); err != nil {
		return nil, err
	}
	cmd := exec.Command(Self)
	cmd.Env = []string{RoleEnv + "=" + RolePodExec, SpecEnv + "=" + specPath}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var logf *os.File
	if spec.Log != "" {
		f, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open log for %s: %w", spec.Name, err)
		}
		logf = f
		cmd.Stdout, cmd.Stderr = f, f
	}
	if spec.Stdout != nil {
		cmd.Stdout = spec.Stdout
	}
	if err := cmd.Start(); err != nil {
		if logf != nil {
			logf.Close()
		}
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Proc{Name: spec.Name, Pid: cmd.Process.Pid, Start: time.Now(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		if logf != nil {
			logf.Close()
		}
		p.mu.Lock()
		p.state, p.err = cmd.ProcessState, err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode returns the exit status, or 128+signal when killed by one; -1
// while running.
func (p *Proc) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		return -1
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.state.ExitCode()
}

// Signal sends sig to the whole process group.
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pgid %d): %w", p.Name, p.Pid, err)
	}
	if sig == syscall.SIGSTOP {
		p.waitStopped(time.Second)
	}
	return nil
}

// waitStopped waits until every thread of the group leader is stopped, so a
// freeze is in force when Signal returns.
func (p *Proc) waitStopped(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && !p.Exited() && !allStopped(p.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
}

func allStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || len(b) < i+3 || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// Stop sends SIGTERM to the group (and SIGCONT, in case it is frozen), waits
// up to grace, then sends SIGKILL and waits for the exit.
func (p *Proc) Stop(grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	_ = p.Signal(syscall.SIGCONT)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // also reaps stragglers in the group
	<-p.done
}

// WaitTCP waits until addr accepts connections through dial, or ctx ends, or
// the process exits.
func (p *Proc) WaitTCP(ctx context.Context, dial func(context.Context) error) error {
	for {
		if err := dial(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", p.Name, ctx.Err())
		case <-p.done:
			return fmt.Errorf("%s exited with code %d before it was ready", p.Name, p.ExitCode())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
