package kubelet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podRun is one Pod on this node, from sandbox to teardown.
type podRun struct {
	pr      *Provider
	dir     string
	ctx     context.Context
	cancel  context.CancelFunc
	runDone chan struct{} // closed when run returns
	done    chan struct{} // closed after teardown

	mu        sync.Mutex
	pod       *corev1.Pod // spec and metadata as last given by the API
	sb        *sandbox
	volumes   map[string]string
	tokens    tokens // of projected volumes; has its own lock
	init      []*container
	main      []*container
	phase     corev1.PodPhase
	reason    string
	message   string
	startTime metav1.Time
	initDone  bool
	deleting  bool
	since     map[corev1.PodConditionType]corev1.PodCondition
}

func newPodRun(pr *Provider, pod *corev1.Pod, seq int) *podRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &podRun{
		pr: pr, pod: pod.DeepCopy(), ctx: ctx, cancel: cancel, done: make(chan struct{}), runDone: make(chan struct{}),
		dir:       filepath.Join(pr.cfg.StateDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, shortUID(pod))),
		phase:     corev1.PodPending,
		startTime: metav1.Now(),
	}
	for _, c := range pod.Spec.InitContainers {
		r.init = append(r.init, newContainer(r, c, true))
	}
	for _, c := range pod.Spec.Containers {
		r.main = append(r.main, newContainer(r, c, false))
	}
	go r.run(seq)
	return r
}

func shortUID(pod *corev1.Pod) string {
	u := string(pod.UID)
	if len(u) > 8 {
		u = u[:8]
	}
	return u
}

// run drives the Pod: sandbox, volumes, init containers, then containers.
// Once the volumes are made, they are refreshed until the containers end.
func (r *podRun) run(seq int) {
	defer close(r.runDone)
	if !r.prepare(seq) {
		return
	}
	rctx, stopRefresh := context.WithCancel(r.ctx)
	refreshDone := make(chan struct{})
	go func() { defer close(refreshDone); r.refreshVolumes(rctx) }()
	defer func() { stopRefresh(); <-refreshDone }()
	for _, c := range r.init {
		if !c.runToCompletion(r.ctx) {
			if r.ctx.Err() == nil {
				r.setPhase(corev1.PodFailed, "InitFailed", "init container "+c.spec.Name+" failed")
			}
			return
		}
	}
	r.mu.Lock()
	r.initDone = true
	r.phase = corev1.PodRunning
	r.mu.Unlock()
	r.notify()
	var wg sync.WaitGroup
	for _, c := range r.main {
		wg.Add(1)
		go func() { defer wg.Done(); c.supervise(r.ctx) }()
	}
	wg.Wait()
	if r.ctx.Err() == nil {
		r.finish()
	}
}

// prepare makes the sandbox and volumes, retrying while the Pod exists.
func (r *podRun) prepare(seq int) bool {
	delay := 200 * time.Millisecond
	for r.ctx.Err() == nil {
		err := r.tryPrepare(seq)
		if err == nil {
			return true
		}
		r.pr.cfg.Logf("pod %s/%s: %v", r.pod.Namespace, r.pod.Name, err)
		reason := "ContainerCreating"
		if !errors.Is(err, errNotReady) {
			reason = "CreatePodSandboxError"
		}
		r.setWaiting(reason, err.Error())
		select {
		case <-r.ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
	return false
}

func (r *podRun) tryPrepare(seq int) error {
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	r.mu.Lock()
	pod := r.pod.DeepCopy()
	r.mu.Unlock()
	vols, err := r.pr.prepareVolumes(ctx, pod, r.dir, &r.tokens)
	if err != nil {
		return err
	}
	if r.sb == nil {
		sb, err := r.pr.newSandbox(ctx, seq, r.dir)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.sb = sb
		r.mu.Unlock()
		r.pr.cfg.OnNetworkChange()
	}
	if err := r.sb.writeNetFiles(r.pr.cfg, pod.Namespace, hostname(pod)); err != nil {
		return err
	}
	r.mu.Lock()
	r.volumes = vols
	r.mu.Unlock()
	r.notify()
	return nil
}

func hostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

// finish marks a Pod whose containers all ended for good.
func (r *podRun) finish() {
	phase := corev1.PodSucceeded
	for _, c := range r.main {
		if c.exitCode() != 0 {
			phase = corev1.PodFailed
		}
	}
	r.setPhase(phase, "", "")
}

func (r *podRun) setPhase(phase corev1.PodPhase, reason, msg string) {
	r.mu.Lock()
	r.phase, r.reason, r.message = phase, reason, msg
	r.mu.Unlock()
	r.notify()
}

func (r *podRun) setWaiting(reason, msg string) {
	for _, c := range append(append([]*container{}, r.init...), r.main...) {
		c.setWaiting(reason, msg)
	}
	r.notify()
}

// stop ends every container, each with the grace period, then tears the
// sandbox down. With kill set it sends SIGKILL at once.
func (r *podRun) stop(grace time.Duration, kill bool) {
	r.mu.Lock()
	r.deleting = true
	r.mu.Unlock()
	if kill {
		grace = 0
	}
	for _, c := range append(append([]*container{}, r.init...), r.main...) {
		c.setGrace(grace)
	}
	r.cancel() // each container stops its process with its grace period
	<-r.runDone
	r.mu.Lock()
	sb := r.sb
	r.sb = nil
	r.mu.Unlock()
	if sb != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		sb.teardown(ctx)
		cancel()
		r.pr.ips.put(sb.ip)
		r.pr.cfg.OnNetworkChange()
	}
	close(r.done)
}

func (r *podRun) notify() { r.pr.notifyPod(r) }

// ip returns the Pod IP, or "" before the sandbox exists.
func (r *podRun) ip() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sb == nil {
		return ""
	}
	return r.sb.ip.String()
}
