package kubelet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// snapshot returns a copy of the Pod with its status as of now.
func (r *podRun) snapshot() *corev1.Pod {
	r.mu.Lock()
	pod := r.pod.DeepCopy()
	phase, reason, msg, initDone := r.phase, r.reason, r.message, r.initDone
	ip := ""
	if r.sb != nil {
		ip = r.sb.ip.String()
	}
	r.mu.Unlock()

	st := corev1.PodStatus{
		Phase: phase, Reason: reason, Message: msg, StartTime: &r.startTime,
		HostIP: r.pr.cfg.NodeIP.String(), HostIPs: []corev1.HostIP{{IP: r.pr.cfg.NodeIP.String()}},
		QOSClass: qosClass(pod),
	}
	if ip != "" {
		st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	for _, c := range r.init {
		st.InitContainerStatuses = append(st.InitContainerStatuses, c.status())
	}
	allReady := len(r.main) > 0
	for _, c := range r.main {
		cs := c.status()
		allReady = allReady && cs.Ready
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	st.Conditions = r.conditions(initDone, allReady && phase == corev1.PodRunning, ip != "")
	pod.Status = st
	return pod
}

// conditions returns the Pod's conditions; a condition's transition time
// changes only when its status does.
func (r *podRun) conditions(initDone, ready, sandbox bool) []corev1.PodCondition {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since == nil {
		r.since = map[corev1.PodConditionType]corev1.PodCondition{}
	}
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		if prev, found := r.since[t]; found && prev.Status == s {
			return prev
		}
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()}
		r.since[t] = c
		return c
	}
	return []corev1.PodCondition{
		cond(corev1.PodScheduled, true),
		cond(corev1.PodReadyToStartContainers, sandbox),
		cond(corev1.PodInitialized, initDone),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodReady, ready),
	}
}

func (c *container) status() corev1.ContainerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	started := c.started
	cs := corev1.ContainerStatus{
		Name: c.spec.Name, Image: c.spec.Image, ImageID: "local://" + c.spec.Image,
		State: *c.state.DeepCopy(), LastTerminationState: *c.last.DeepCopy(),
		Ready: c.ready && c.state.Running != nil, RestartCount: c.restarts, Started: &started,
	}
	if c.state.Running != nil && c.proc != nil {
		cs.ContainerID = "process://" + itoa(c.proc.Pid)
	}
	if cs.LastTerminationState.Terminated != nil && c.state.Terminated != nil {
		cs.LastTerminationState = corev1.ContainerState{}
	}
	return cs
}

// markStopped records every container as terminated, for the final status
// of a deleted Pod.
func (r *podRun) markStopped() {
	for _, c := range append(append([]*container{}, r.init...), r.main...) {
		c.mu.Lock()
		if c.state.Terminated == nil {
			c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Killed", FinishedAt: metav1.Now(),
			}}
		}
		c.ready = false
		c.mu.Unlock()
	}
	r.mu.Lock()
	if r.phase != corev1.PodFailed {
		r.phase = corev1.PodSucceeded
	}
	r.mu.Unlock()
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
