package kubelet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/podexec"
	"github.com/shipstream/bloodraven/playground/internal/proc"
)

// errNoImage marks a container whose image has no local program.
var errNoImage = errors.New("no local program for image")

// container is one container of a Pod across its restarts.
type container struct {
	r       *podRun
	spec    corev1.Container
	init    bool
	logPath string

	mu       sync.Mutex
	proc     *proc.Proc
	runs     int
	state    corev1.ContainerState
	last     corev1.ContainerState
	restarts int32
	ready    bool
	started  bool
	grace    time.Duration
}

func newContainer(r *podRun, spec corev1.Container, init bool) *container {
	grace := 30 * time.Second
	if g := r.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	return &container{
		r: r, spec: spec, init: init, grace: grace,
		logPath: filepath.Join(r.dir, "logs", spec.Name+".log"),
		state:   corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}
}

func (c *container) setGrace(d time.Duration) {
	c.mu.Lock()
	c.grace = d
	c.mu.Unlock()
}

func (c *container) setWaiting(reason, msg string) {
	c.mu.Lock()
	if c.proc == nil || c.proc.Exited() {
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	c.mu.Unlock()
}

// supervise runs the container until the Pod stops, restarting it as the
// Pod's restartPolicy says, with exponential backoff.
func (c *container) supervise(ctx context.Context) {
	backoff := c.r.pr.cfg.BackoffInitial
	for ctx.Err() == nil {
		p, err := c.start()
		if err != nil {
			c.setWaiting(startReason(err), err.Error())
			c.r.notify()
			if !sleepCtx(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, c.r.pr.cfg.BackoffMax)
			continue
		}
		c.r.notify()
		c.runOnce(ctx, p)
		if ctx.Err() != nil || !c.shouldRestart() {
			return
		}
		if time.Since(p.Start) > 10*c.r.pr.cfg.BackoffMax {
			backoff = c.r.pr.cfg.BackoffInitial // it ran fine for a long while
		}
		c.setWaiting("CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container", backoff))
		c.r.notify()
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, c.r.pr.cfg.BackoffMax)
	}
}

// runOnce waits for the process, running its probes meanwhile; when ctx
// ends first it stops the process with the grace period.
func (c *container) runOnce(ctx context.Context, p *proc.Proc) {
	probeCtx, cancelProbes := context.WithCancel(ctx)
	go c.probe(probeCtx, p)
	select {
	case <-p.Done():
	case <-ctx.Done():
		c.mu.Lock()
		grace := c.grace
		c.mu.Unlock()
		p.Stop(c.preStop(grace, p.Done()))
	}
	cancelProbes()
	c.terminated(p)
}

// runToCompletion runs an init container until it succeeds.
func (c *container) runToCompletion(ctx context.Context) bool {
	backoff := c.r.pr.cfg.BackoffInitial
	for ctx.Err() == nil {
		p, err := c.start()
		if err == nil {
			c.r.notify()
			c.runOnce(ctx, p)
			if p.ExitCode() == 0 {
				return true
			}
			if c.r.pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
				return false
			}
		} else {
			c.setWaiting(startReason(err), err.Error())
			c.r.notify()
		}
		if !sleepCtx(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, c.r.pr.cfg.BackoffMax)
	}
	return false
}

func startReason(err error) string {
	if errors.Is(err, errNoImage) {
		return "ErrImagePull"
	}
	return "CreateContainerError"
}

func (c *container) shouldRestart() bool {
	switch c.r.pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return c.exitCode() != 0
	}
	return true
}

func (c *container) exitCode() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.state.Terminated; t != nil {
		return t.ExitCode
	}
	if t := c.last.Terminated; t != nil && c.state.Waiting != nil {
		return t.ExitCode
	}
	return 0
}

// start launches the container's process in the Pod's namespaces.
func (c *container) start() (*proc.Proc, error) {
	spec, err := c.execSpec(nil)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.runs++
	name := fmt.Sprintf("%s.%d", c.spec.Name, c.runs)
	if c.runs > 1 {
		c.restarts++
	}
	c.mu.Unlock()
	p, err := proc.Start(proc.Spec{Name: name, Exec: spec, Log: c.logPath, SpecDir: c.r.dir})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if t := c.state.Terminated; t != nil {
		c.last = c.state
	} else if c.state.Waiting != nil && c.last.Terminated == nil {
		c.last = corev1.ContainerState{}
	}
	c.proc = p
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.Start)}}
	c.ready, c.started = false, false
	c.mu.Unlock()
	c.r.pr.cfg.Logf("pod %s/%s: container %s started, pid %d", c.r.pod.Namespace, c.r.pod.Name, c.spec.Name, p.Pid)
	return p, nil
}

func (c *container) terminated(p *proc.Proc) {
	code := int32(p.ExitCode())
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	c.mu.Lock()
	var started metav1.Time
	if c.state.Running != nil {
		started = c.state.Running.StartedAt
	}
	c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: metav1.Now(),
		ContainerID: fmt.Sprintf("process://%d", p.Pid),
	}}
	c.last = c.state
	c.ready = false
	c.mu.Unlock()
	c.r.pr.cfg.Logf("pod %s/%s: container %s exited with %d", c.r.pod.Namespace, c.r.pod.Name, c.spec.Name, code)
	c.r.notify()
}

// signal sends sig to the container's process group.
func (c *container) signal(sig syscall.Signal) error {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil || p.Exited() {
		return fmt.Errorf("container %s is not running", c.spec.Name)
	}
	return p.Signal(sig)
}

// execSpec builds the helper spec for the container's program, or for argv
// inside the container's namespaces when argv is set (exec probes).
func (c *container) execSpec(argv []string) (podexec.Spec, error) {
	r := c.r
	r.mu.Lock()
	sb, vols, pod := r.sb, r.volumes, r.pod
	r.mu.Unlock()
	if sb == nil {
		return podexec.Spec{}, errors.New("pod sandbox is gone")
	}
	img, ok := r.pr.cfg.Images.Lookup(c.spec.Image)
	env, err := c.env(pod, sb)
	if err != nil {
		return podexec.Spec{}, err
	}
	if argv == nil {
		if argv, err = c.argv(img, ok, envLookup(env)); err != nil {
			return podexec.Spec{}, err
		}
	}
	mounts, err := c.mounts(sb, vols, img)
	if err != nil {
		return podexec.Spec{}, err
	}
	return podexec.Spec{
		NetNS: nsutil.Path(sb.netns), Argv: argv, Env: env, Dir: c.spec.WorkingDir,
		Mounts: mounts, CreatedDirs: r.pr.cfg.CreatedDirs,
	}, nil
}

// argv is the container's command line: its command, or else the image's
// entrypoint, then its args, or else the image's. $(VAR) references in the
// container's own command and args expand from its environment.
func (c *container) argv(img Image, known bool, lookup func(string) (string, bool)) ([]string, error) {
	args := expandAll(c.spec.Args, lookup)
	if len(c.spec.Command) > 0 {
		return append(expandAll(c.spec.Command, lookup), args...), nil
	}
	if !known || len(img.Entrypoint) == 0 {
		return nil, fmt.Errorf("%w %q and the container sets no command", errNoImage, c.spec.Image)
	}
	if p := img.Entrypoint[0]; filepath.IsAbs(p) && !isFile(p) {
		return nil, fmt.Errorf("%w %q: %s does not exist (build it first)", errNoImage, c.spec.Image, p)
	}
	if len(args) == 0 {
		args = img.Cmd
	}
	return append(append([]string{}, img.Entrypoint...), args...), nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func sanitize(p string) string {
	return strings.Trim(strings.ReplaceAll(filepath.Clean(p), "/", "_"), "_")
}
