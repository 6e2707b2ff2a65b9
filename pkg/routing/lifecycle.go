package routing

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Sidecar paths of the instance lifecycle (pkg/sidecar/probes.go).
const (
	PathLive = "/healthz/live"
	PathStop = "/lifecycle/stop"
)

// Probe timing of the mysqld container. The liveness check's own SQL read
// is bounded by the sidecar (2 s), below the probe's timeout.
const (
	startupPeriod    = 2 * time.Second
	livenessPeriod   = 10 * time.Second
	livenessTimeout  = 5 * time.Second
	livenessFailures = 3
)

// Fallbacks for a group stored before spec.instance existed.
const (
	fallbackStartDelay = 30 * time.Second
	fallbackStopDelay  = 30 * time.Second
)

// stopDelay is the site Pods' termination grace, which the sidecar's
// termination fits in: Options.TerminationGracePeriod when set, else
// spec.instance.stopDelay.
func (r *Router) stopDelay(g *v1alpha1.MysqlFailoverGroup) time.Duration {
	if r.opts.TerminationGracePeriod > 0 {
		return r.opts.TerminationGracePeriod
	}
	if d := g.Spec.Instance.StopDelay.Duration; d > 0 {
		return d
	}
	return fallbackStopDelay
}

func startDelay(g *v1alpha1.MysqlFailoverGroup) time.Duration {
	if d := g.Spec.Instance.StartDelay.Duration; d > 0 {
		return d
	}
	return fallbackStartDelay
}

// healthPort is where the sidecar serves its probes: its health port with
// the authenticated transport, else its only port.
func (r *Router) healthPort() int32 {
	if r.tlsEnabled() {
		return SidecarHealthPort
	}
	return SidecarPort
}

// withLifecycle makes the sidecar the judge of the mysqld container
// (docs/sidecar.md, "Probes"):
//   - startup: /healthz/live may fail for startDelay before liveness counts;
//   - liveness: /healthz/live reads mysqld by SQL with a timeout, so a
//     frozen mysqld is restarted and one in crash recovery is not;
//   - readiness: /readyz, which needs the application account to log in;
//   - preStop: /lifecycle/stop fences, drains and shuts mysqld down
//     before the kubelet's SIGTERM reaches it.
func (r *Router) withLifecycle(g *v1alpha1.MysqlFailoverGroup, c corev1.Container) corev1.Container {
	get := func(path string) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(r.healthPort()), Scheme: corev1.URISchemeHTTP}}
	}
	failures := int32((startDelay(g) + startupPeriod - 1) / startupPeriod)
	c.StartupProbe = &corev1.Probe{ProbeHandler: get(PathLive), PeriodSeconds: int32(startupPeriod.Seconds()),
		TimeoutSeconds: int32(livenessTimeout.Seconds()), FailureThreshold: max(failures, 1)}
	c.LivenessProbe = &corev1.Probe{ProbeHandler: get(PathLive), PeriodSeconds: int32(livenessPeriod.Seconds()),
		TimeoutSeconds: int32(livenessTimeout.Seconds()), FailureThreshold: livenessFailures}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: get(PathReadyz), PeriodSeconds: 2, TimeoutSeconds: 3, FailureThreshold: 2}
	c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: get(PathStop).HTTPGet}}
	return c
}
