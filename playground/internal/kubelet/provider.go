package kubelet

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
)

// Provider runs the Pods of one node as local processes.
type Provider struct {
	cfg Config
	ips *ipPool

	mu     sync.Mutex
	runs   map[string]*podRun // by namespace/name
	notify func(*corev1.Pod)
}

// NewProvider makes a provider for the node cfg describes.
func NewProvider(cfg Config) (*Provider, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, ips: newIPPool(cfg.PodCIDR), runs: map[string]*podRun{}, notify: func(*corev1.Pod) {}}, nil
}

// sandboxSeq numbers Pod sandboxes across every node of this process, so a
// restarted node never reuses a name whose namespace is still going away.
var sandboxSeq atomic.Int64

func key(ns, name string) string { return ns + "/" + name }

// CreatePod starts the Pod in the background; its status follows through NotifyPods.
func (pr *Provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	k := key(pod.Namespace, pod.Name)
	if r, ok := pr.runs[k]; ok && r.pod.UID == pod.UID {
		return nil
	}
	pr.runs[k] = newPodRun(pr, pod, int(sandboxSeq.Add(1)))
	return nil
}

// UpdatePod keeps the Pod's new metadata; a running Pod's spec does not change.
func (pr *Provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	r := pr.get(pod.Namespace, pod.Name)
	if r == nil {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	r.mu.Lock()
	r.pod.ObjectMeta = *pod.ObjectMeta.DeepCopy()
	r.mu.Unlock()
	return nil
}

// DeletePod stops the Pod's containers within its grace period, in the
// background, and reports the terminal status when done.
func (pr *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	r := pr.get(pod.Namespace, pod.Name)
	if r == nil || r.pod.UID != pod.UID {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	r.mu.Lock()
	already := r.deleting
	r.deleting = true
	r.mu.Unlock()
	if already {
		return nil
	}
	grace := 30 * time.Second
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	} else if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	go func() {
		r.stop(grace, false)
		r.markStopped()
		pr.notifyPod(r)
		pr.mu.Lock()
		if pr.runs[key(pod.Namespace, pod.Name)] == r {
			delete(pr.runs, key(pod.Namespace, pod.Name))
		}
		pr.mu.Unlock()
	}()
	return nil
}

// GetPod returns the Pod with its current status.
func (pr *Provider) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	r := pr.get(ns, name)
	if r == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", ns, name)
	}
	return r.snapshot(), nil
}

// GetPodStatus returns the Pod's current status.
func (pr *Provider) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	p, err := pr.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &p.Status, nil
}

// GetPods lists every Pod on the node.
func (pr *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, r := range pr.list() {
		out = append(out, r.snapshot())
	}
	return out, nil
}

// NotifyPods registers the status callback.
func (pr *Provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	pr.mu.Lock()
	pr.notify = cb
	pr.mu.Unlock()
}

func (pr *Provider) notifyPod(r *podRun) {
	pr.mu.Lock()
	cb := pr.notify
	pr.mu.Unlock()
	cb(r.snapshot())
}

func (pr *Provider) get(ns, name string) *podRun {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.runs[key(ns, name)]
}

func (pr *Provider) list() []*podRun {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	out := make([]*podRun, 0, len(pr.runs))
	for _, r := range pr.runs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// PodInfo is what fault injection needs to know about a Pod.
type PodInfo struct {
	Namespace, Name, IP string
	Labels              map[string]string
}

// Pods lists the node's Pods with their IPs.
func (pr *Provider) Pods() []PodInfo {
	var out []PodInfo
	for _, r := range pr.list() {
		r.mu.Lock()
		info := PodInfo{Namespace: r.pod.Namespace, Name: r.pod.Name, Labels: r.pod.Labels}
		r.mu.Unlock()
		info.IP = r.ip()
		out = append(out, info)
	}
	return out
}

// Signal sends sig to a container's process group.
func (pr *Provider) Signal(ns, pod, name string, sig syscall.Signal) error {
	r := pr.get(ns, pod)
	if r == nil {
		return fmt.Errorf("pod %s/%s is not on node %s", ns, pod, pr.cfg.Node)
	}
	for _, c := range append(append([]*container{}, r.init...), r.main...) {
		if c.spec.Name == name || (name == "" && !c.init) {
			return c.signal(sig)
		}
	}
	return fmt.Errorf("pod %s/%s has no container %q", ns, pod, name)
}

// Shutdown kills every Pod at once, as a node that loses power, without
// reporting their status.
func (pr *Provider) Shutdown() {
	pr.NotifyPods(context.Background(), func(*corev1.Pod) {})
	var wg sync.WaitGroup
	for _, r := range pr.list() {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop(0, true) }()
	}
	wg.Wait()
	pr.mu.Lock()
	pr.runs = map[string]*podRun{}
	pr.mu.Unlock()
}
