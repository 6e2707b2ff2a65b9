package kubelet

import (
	corev1 "k8s.io/api/core/v1"
)

// qosClass is the Pod's QoS class. The API server sets status.qosClass when
// the Pod is created and rejects any status update that changes it, so the
// class it chose is kept; a Pod without one (never from the API server) gets
// the class Kubernetes would compute from its containers' cpu and memory.
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	var all []corev1.Container
	all = append(append(all, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if pod.Spec.Resources != nil {
		all = []corev1.Container{{Resources: *pod.Spec.Resources}} // pod-level resources decide alone
	}
	some, guaranteed := false, len(all) > 0
	for _, c := range all {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				some = true
			}
			if !hasLim || lim.IsZero() || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !some:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
