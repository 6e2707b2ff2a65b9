package routing

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

func containerNamed(spec corev1.PodSpec, name string) corev1.Container {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

func TestPodLifecycle(t *testing.T) {
	d := func(s string) metav1.Duration { v, _ := time.ParseDuration(s); return metav1.Duration{Duration: v} }
	cases := []struct {
		name          string
		instance      v1alpha1.InstanceSpec
		grace         time.Duration // Options.TerminationGracePeriod
		tls           bool
		wantGrace     int64
		wantStartup   int32 // failure threshold, 2 s apart
		wantPort      int
		wantStopArg   string
		wantStartArgs string
	}{
		{"defaults of a group stored before spec.instance", v1alpha1.InstanceSpec{}, 0, false, 30, 15, SidecarPort,
			"--stop-delay=30s", "--start-delay=30s"},
		{"stopDelay is the grace, startDelay the startup budget",
			v1alpha1.InstanceSpec{StartDelay: d("10m"), StopDelay: d("45s")}, 0, false, 45, 300, SidecarPort,
			"--stop-delay=45s", "--start-delay=10m0s"},
		{"an odd startDelay rounds the budget up", v1alpha1.InstanceSpec{StartDelay: d("5s"), StopDelay: d("5s")},
			0, false, 5, 3, SidecarPort, "--stop-delay=5s", "--start-delay=5s"},
		{"the operator's -site-termination-grace wins, and the sidecar is told",
			v1alpha1.InstanceSpec{StopDelay: d("45s")}, 12 * time.Second, false, 12, 15, SidecarPort,
			"--stop-delay=12s", "--start-delay=30s"},
		{"with TLS the probes use the plain health port", v1alpha1.InstanceSpec{}, 0, true, 30, 15, SidecarHealthPort,
			"--stop-delay=30s", "--start-delay=30s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			r, _, _ := tlsRouter(t, &now)
			if !tc.tls {
				r.opts.CA = func() *pki.CA { return nil }
			}
			r.opts.TerminationGracePeriod = tc.grace
			g := tlsGroup()
			g.Spec.Instance = tc.instance
			spec := r.renderPodSpec(g, g.Spec.Sites[0])
			if got := *spec.TerminationGracePeriodSeconds; got != tc.wantGrace {
				t.Errorf("terminationGracePeriodSeconds %d, want %d", got, tc.wantGrace)
			}
			m := containerNamed(spec, ContainerMysqld)
			probes := map[string]*corev1.Probe{PathLive + " startup": m.StartupProbe, PathLive + " liveness": m.LivenessProbe,
				PathReadyz + " readiness": m.ReadinessProbe}
			for what, p := range probes {
				path, _, _ := strings.Cut(what, " ")
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.IntValue() != tc.wantPort {
					t.Errorf("mysqld %s probe %+v, want httpGet %s on %d", what, p, path, tc.wantPort)
				}
			}
			if got := m.StartupProbe.FailureThreshold * m.StartupProbe.PeriodSeconds; got != tc.wantStartup*2 {
				t.Errorf("startup probe allows %ds, want %ds", got, tc.wantStartup*2)
			}
			if m.LivenessProbe.TimeoutSeconds <= 2 {
				t.Errorf("liveness timeout %ds must exceed the sidecar's 2s SQL read", m.LivenessProbe.TimeoutSeconds)
			}
			pre := m.Lifecycle
			if pre == nil || pre.PreStop == nil || pre.PreStop.HTTPGet == nil || pre.PreStop.HTTPGet.Path != PathStop ||
				pre.PreStop.HTTPGet.Port.IntValue() != tc.wantPort {
				t.Errorf("mysqld preStop %+v, want httpGet %s on %d", pre, PathStop, tc.wantPort)
			}
			args := strings.Join(containerNamed(spec, ContainerSidecar).Args, " ")
			for _, want := range []string{tc.wantStopArg, tc.wantStartArgs, "--app-login-user=$(" + EnvAppLoginUser + ")"} {
				if !strings.Contains(args, want) {
					t.Errorf("sidecar args %q lack %q", args, want)
				}
			}
		})
	}
}
