//go:build envtest

package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// deploymentSim plays the Deployment controller and the kubelet for the
// sites' Deployments, which envtest lacks. A Deployment seen for the first
// time is rolled out at once. A later generation (a new Pod template,
// strategy Recreate) stops the site's mysqld, starts it again and only then
// reports the rollout complete. It records the order of the restarts and
// any moment when a restart begins while another site is still down.
type deploymentSim struct {
	e    *env
	mu   sync.Mutex
	seen map[string]int64 // generation last acted on, by site
	// tmpl is the Pod template last rolled out, by site: a generation
	// that keeps it (a strategy or revision history change) replaces no
	// Pod, as with the real Deployment controller.
	tmpl map[string]corev1.PodTemplateSpec
	down map[string]bool // restarting now
	// restarts lists the sites restarted, in order; overlaps the restarts
	// that began while another site was down.
	restarts []string
	overlaps []string
	// reboots lists the sites whose new mysqld exited after it started.
	reboots []string
	// hold keeps a site down after its stop until released.
	hold map[string]chan struct{}
	stop chan struct{}
	done chan struct{}
	// restarting counts the restarts under way: close waits for them, so
	// that none logs after its test ended.
	restarting sync.WaitGroup
}

func (e *env) simulateDeployments() *deploymentSim {
	s := &deploymentSim{e: e, seen: map[string]int64{}, tmpl: map[string]corev1.PodTemplateSpec{},
		down: map[string]bool{}, hold: map[string]chan struct{}{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	e.t.Cleanup(s.close)
	return s
}

func (s *deploymentSim) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	idle := make(chan struct{})
	go func() { s.restarting.Wait(); close(idle) }()
	select {
	case <-idle:
	case <-time.After(15 * time.Second): // a site held and never released
	}
}

func (s *deploymentSim) run() {
	defer close(s.done)
	for {
		var list appsv1.DeploymentList
		if err := cp.Client.List(context.Background(), &list, client.InNamespace(s.e.ns),
			client.MatchingLabels{v1alpha1.LabelGroup: "orders"}); err == nil {
			for i := range list.Items {
				s.observe(&list.Items[i])
			}
		}
		select {
		case <-s.stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *deploymentSim) observe(d *appsv1.Deployment) {
	site := d.Labels[v1alpha1.LabelSite]
	s.mu.Lock()
	gen, known := s.seen[site]
	if known && gen >= d.Generation {
		s.mu.Unlock()
		return
	}
	s.seen[site] = d.Generation
	last, sameTemplate := s.tmpl[site]
	sameTemplate = sameTemplate && equality.Semantic.DeepEqual(last.Spec, d.Spec.Template.Spec) &&
		equality.Semantic.DeepEqual(last.ObjectMeta, d.Spec.Template.ObjectMeta)
	s.tmpl[site] = *d.Spec.Template.DeepCopy()
	if !known || sameTemplate {
		s.mu.Unlock()
		s.rolledOut(d.Name, d.Generation)
		return
	}
	for other, isDown := range s.down {
		if isDown && other != site {
			s.overlaps = append(s.overlaps, fmt.Sprintf("%s while %s was down", site, other))
		}
	}
	s.down[site] = true
	s.restarts = append(s.restarts, site)
	hold := s.hold[site]
	s.mu.Unlock()
	s.restarting.Add(1)
	go func() {
		defer s.restarting.Done()
		i := s.e.index(site)
		s.e.db.Stop(i)
		time.Sleep(300 * time.Millisecond)
		if hold != nil {
			<-hold
		}
		s.start(site)
		// A newer generation applied while this one restarted (the
		// update rolling back a hand edit that is still rolling out)
		// reports the rollout itself: this one must not report an
		// older generation after it.
		s.mu.Lock()
		current := s.seen[site] == d.Generation
		s.mu.Unlock()
		if !current {
			return
		}
		s.rolledOut(d.Name, d.Generation)
		s.mu.Lock()
		if s.seen[site] == d.Generation {
			s.down[site] = false
		}
		s.mu.Unlock()
	}()
}

// start boots the site's mysqld and, for the next three seconds, boots it
// again when it exits, as the kubelet restarts a container. (In a real
// rollout the Pod is replaced with its sidecar; here the sidecar outlives
// the restart, as it does when only the mysqld container restarts.) The
// sidecar must leave the new mysqld running: it boots read_only, and a
// fence that failed while the old one stopped is no reason to stop it
// (pkg/sidecar/successor.go). An exit is recorded in reboots.
func (s *deploymentSim) start(site string) {
	i := s.e.index(site)
	deadline := time.Now().Add(3 * time.Second)
	booted := false
	for {
		if !s.e.db.Running(i) {
			if booted {
				s.mu.Lock()
				s.reboots = append(s.reboots, site)
				s.mu.Unlock()
			}
			err := s.e.db.Start(i)
			if err != nil {
				s.e.t.Logf("start %s: %v (retrying)", site, err)
			}
			booted = booted || err == nil
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rolledOut reports the Deployment's one Pod updated and available, its
// fake Pod running the template's images as a new Pod would.
func (s *deploymentSim) rolledOut(name string, gen int64) {
	for range 20 {
		var d appsv1.Deployment
		if err := cp.Client.Get(context.Background(), types.NamespacedName{Namespace: s.e.ns, Name: name}, &d); err != nil {
			continue
		}
		if err := s.podImages(&d); err != nil {
			continue
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: gen, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1,
			AvailableReplicas: 1}
		if err := cp.Client.Status().Update(context.Background(), &d); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.e.t.Errorf("deployment %s: status not written", name)
}

// podImages sets the images of the site's fake Pod to d's template.
func (s *deploymentSim) podImages(d *appsv1.Deployment) error {
	var pod corev1.Pod
	key := types.NamespacedName{Namespace: s.e.ns, Name: "orders-" + d.Labels[v1alpha1.LabelSite] + "-0"}
	if err := cp.Client.Get(context.Background(), key, &pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	changed := false
	for i, c := range pod.Spec.Containers {
		for _, w := range d.Spec.Template.Spec.Containers {
			if w.Name == c.Name && w.Image != c.Image {
				pod.Spec.Containers[i].Image, changed = w.Image, true
			}
		}
	}
	if !changed {
		return nil
	}
	return cp.Client.Update(context.Background(), &pod)
}

// holdSite keeps the site down after its next stop until the returned
// function is called.
func (s *deploymentSim) holdSite(site string) func() {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold[site] = ch
	s.mu.Unlock()
	return func() { close(ch) }
}

func (s *deploymentSim) restarted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.restarts)
}

// rebooted lists the sites whose restarted mysqld exited again.
func (s *deploymentSim) rebooted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reboots)
}

func (s *deploymentSim) overlapped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.overlaps)
}

// changeLeaseTimeout changes spec.sidecar.leaseTimeout: a change of every
// site's Pod template.
func (e *env) changeLeaseTimeout(d time.Duration) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"sidecar":{"leaseTimeout":%q}}}`, d.String())
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Namespace, g.Name = e.ns, "orders"
	if err := cp.Client.Patch(e.t.Context(), g, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		e.t.Fatalf("leaseTimeout %s: %v", d, err)
	}
}

// phases records every distinct status.phase and message the group shows
// until stopped.
type phaseLog struct {
	mu   sync.Mutex
	seen []string
	stop chan struct{}
	done chan struct{}
}

func (e *env) logPhases() *phaseLog {
	pl := &phaseLog{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(pl.done)
		for {
			g := &v1alpha1.MysqlFailoverGroup{}
			if err := cp.Client.Get(context.Background(), types.NamespacedName{Namespace: e.ns, Name: "orders"}, g); err == nil {
				line := string(g.Status.Phase) + ": " + g.Status.Message
				pl.mu.Lock()
				if n := len(pl.seen); n == 0 || pl.seen[n-1] != line {
					pl.seen = append(pl.seen, line)
				}
				pl.mu.Unlock()
			}
			select {
			case <-pl.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	e.t.Cleanup(pl.end)
	return pl
}

func (pl *phaseLog) end() {
	select {
	case <-pl.stop:
	default:
		close(pl.stop)
	}
	<-pl.done
}

func (pl *phaseLog) lines() []string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return slices.Clone(pl.seen)
}
