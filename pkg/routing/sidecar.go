package routing

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Environment variables the sidecar container gets from the credentials
// Secrets. Its flags refer to them as $(VAR), which the kubelet expands, so
// neither passwords nor usernames are written into the Pod spec.
const (
	EnvMySQLUser       = "BLOODRAVEN_MYSQL_USER"
	EnvMySQLPassword   = "BLOODRAVEN_MYSQL_PASSWORD"
	EnvReplicationUser = "BLOODRAVEN_ACCOUNT_REPLICATION"
	EnvMonitorUser     = "BLOODRAVEN_ACCOUNT_MONITOR"
	// The application account, which readiness logs in as.
	EnvAppLoginUser     = "BLOODRAVEN_APP_LOGIN_USER"
	EnvAppLoginPassword = "BLOODRAVEN_APP_LOGIN_PASSWORD"
)

// Sidecar HTTP paths of the probes.
const (
	PathReadyz  = "/readyz"
	PathHealthz = "/healthz"
)

func (r *Router) sidecarImage(g *v1alpha1.MysqlFailoverGroup) string {
	if r.opts.SidecarImage != "" {
		return r.opts.SidecarImage
	}
	return g.Spec.Sidecar.Image
}

// SidecarArgs are the sidecar's flags for one site. The DSN reaches mysqld
// over the Pod-local unix socket as the operator account. --system-users
// names the operator, replication and monitor accounts, which a fence must
// never kill; --app-users stays empty, so a fence kills every other account.
func (r *Router) SidecarArgs(g *v1alpha1.MysqlFailoverGroup, site string) []string {
	return []string{
		"--namespace=" + g.Namespace,
		"--group=" + g.Name,
		"--site=" + site,
		fmt.Sprintf("--mysql-dsn=$(%s):$(%s)@unix(%s)/", EnvMySQLUser, EnvMySQLPassword, SocketPath),
		"--operator-url=" + r.opts.OperatorURL,
		"--peers=" + r.peers(g, site),
		"--lease-timeout=" + g.Spec.Sidecar.LeaseTimeout.Duration.String(),
		"--peer-check-interval=" + g.Spec.Sidecar.PeerCheckInterval.Duration.String(),
		"--view-keys=" + ViewKeysPath,
		"--state-dir=" + RunDir,
		fmt.Sprintf("--listen=:%d", SidecarPort),
		fmt.Sprintf("--system-users=$(%s),$(%s),$(%s)", EnvMySQLUser, EnvReplicationUser, EnvMonitorUser),
		// Evidence that mysqld is gone, and the pid a stuck fence kills;
		// the Pod shares one process namespace so the pid means mysqld.
		"--mysqld-pid-file=" + podPaths.PIDFile,
		fmt.Sprintf("--mysqld-tcp=127.0.0.1:%d", MySQLPort),
		"--stop-delay=" + r.stopDelay(g).String(),
		"--start-delay=" + startDelay(g).String(),
		fmt.Sprintf("--app-login-user=$(%s)", EnvAppLoginUser),
	}
}

// peers lists every other site as site=url, in spec order.
func (r *Router) peers(g *v1alpha1.MysqlFailoverGroup, self string) string {
	var p []string
	for _, s := range g.Spec.Sites {
		if s.Name != self {
			p = append(p, s.Name+"="+r.opts.PeerURL(g.Namespace, g.Name, s.Name))
		}
	}
	return strings.Join(p, ",")
}

func (r *Router) sidecarContainer(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) corev1.Container {
	fromSecret := func(role, key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: CredentialSecretName(g, role)}, Key: key}}
	}
	http := func(path string) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(SidecarPort), Scheme: corev1.URISchemeHTTP}}
	}
	return corev1.Container{
		Name:    ContainerSidecar,
		Image:   r.sidecarImage(g),
		Command: r.opts.SidecarCommand,
		Args:    r.SidecarArgs(g, s.Name),
		Env: []corev1.EnvVar{
			{Name: EnvMySQLUser, ValueFrom: fromSecret(AccountOperator, SecretKeyUsername)},
			{Name: EnvMySQLPassword, ValueFrom: fromSecret(AccountOperator, SecretKeyPassword)},
			{Name: EnvReplicationUser, ValueFrom: fromSecret(AccountReplication, SecretKeyUsername)},
			{Name: EnvMonitorUser, ValueFrom: fromSecret(AccountMonitor, SecretKeyUsername)},
			{Name: EnvAppLoginUser, ValueFrom: fromSecret(AccountApplication, SecretKeyUsername)},
			{Name: EnvAppLoginPassword, ValueFrom: fromSecret(AccountApplication, SecretKeyPassword)},
		},
		Ports:          []corev1.ContainerPort{{Name: PortNameSidecar, ContainerPort: SidecarPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: http(PathReadyz), PeriodSeconds: 2, FailureThreshold: 2},
		LivenessProbe:  &corev1.Probe{ProbeHandler: http(PathHealthz), PeriodSeconds: 10, TimeoutSeconds: 3, FailureThreshold: 3},
		VolumeMounts: []corev1.VolumeMount{{Name: volRun, MountPath: RunDir},
			{Name: volViewKeys, MountPath: ViewKeysDir, ReadOnly: true}},
	}
}
