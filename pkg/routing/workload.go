package routing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Volume names of a site's Pod.
const (
	volData   = "data"
	volConfig = "config"
	volInit   = "init-sql"
	volRun    = "run"
)

func (r *Router) mysqlImage(g *v1alpha1.MysqlFailoverGroup) string {
	if r.opts.MySQLImage != "" {
		return r.opts.MySQLImage
	}
	return g.Spec.MySQL.Image
}

func (r *Router) flavor(g *v1alpha1.MysqlFailoverGroup) v1alpha1.Flavor {
	return ConfigFlavor(g.Spec.MySQL, r.mysqlImage(g))
}

func objectMeta(name string, g *v1alpha1.MysqlFailoverGroup, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: g.Namespace, Labels: labels}
}

func (r *Router) renderConfigMap(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(ConfigMapName(g.Name, s.Name), g, siteLabels(g, s.Name)),
		Data: map[string]string{
			configMapKey: renderMyCnf(r.flavor(g), s.Name, g.Spec.MySQL.Config, g.Spec.MySQL.TLS, r.cnfPaths()),
		},
	}
}

// configHash is the SHA-256 of the site's my.cnf.
func (r *Router) configHash(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) string {
	sum := sha256.Sum256([]byte(r.renderConfigMap(g, s).Data[configMapKey]))
	return hex.EncodeToString(sum[:])
}

func (r *Router) renderInitSecret(g *v1alpha1.MysqlFailoverGroup, c Credentials) (*corev1.Secret, error) {
	c.ReplicationX509 = r.tlsEnabled()
	sql, err := RenderInitSQL(r.flavor(g), c)
	if err != nil {
		return nil, err
	}
	labels := groupLabels(g)
	labels[labelComponent] = "init-sql"
	return &corev1.Secret{
		ObjectMeta: objectMeta(InitSecretName(g.Name), g, labels),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{initSecretKey: []byte(sql)},
	}, nil
}

// renderPVC: the PVC carries no owner reference, so deleting the group
// leaves the data behind.
func (r *Router) renderPVC(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *corev1.PersistentVolumeClaim {
	st := g.Spec.MySQL.Storage
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: objectMeta(PVCName(g.Name, s.Name), g, siteLabels(g, s.Name)),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: st.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size},
			},
		},
	}
}

// convergePVC applies a site's PVC unless the live one already has every
// field it sets. Unlike other kinds, the API server rewrites a PVC once on the
// first apply after its creation even when nothing changed, so the compare is
// what keeps a second Converge from writing.
func (r *Router) convergePVC(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) error {
	want := r.renderPVC(g, s)
	var live corev1.PersistentVolumeClaim
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("get pvc %s: %w", want.Name, err)
	case pvcUpToDate(&live, want):
		return nil
	}
	return r.apply(ctx, g, want, false)
}

func pvcUpToDate(live, want *corev1.PersistentVolumeClaim) bool {
	for k, v := range want.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	ws, ls := want.Spec, live.Spec
	wantSize, liveSize := ws.Resources.Requests[corev1.ResourceStorage], ls.Resources.Requests[corev1.ResourceStorage]
	return slices.Equal(ls.AccessModes, ws.AccessModes) && liveSize.Cmp(wantSize) == 0 &&
		(ws.StorageClassName == nil || (ls.StorageClassName != nil && *ls.StorageClassName == *ws.StorageClassName))
}

// podLabels are a site Pod's labels at creation. Every Pod starts as a
// replica: mysqld boots read-only, and only SetRoleLabels makes a Pod the
// primary. The role never changes in the template, because any template
// change would restart the site's Pod.
func podLabels(g *v1alpha1.MysqlFailoverGroup, site string) map[string]string {
	l := siteLabels(g, site)
	l[v1alpha1.LabelRole] = v1alpha1.RoleReplica
	return l
}

// NodeSelector is where a site's Pods run: site.nodeSelector, with
// topology.kubernetes.io/zone=<zone> on top when the site names a zone.
func NodeSelector(s v1alpha1.Site) map[string]string {
	sel := map[string]string{}
	for k, v := range s.NodeSelector {
		sel[k] = v
	}
	if s.Zone != "" {
		sel[ZoneLabel] = s.Zone
	}
	return sel
}

func (r *Router) renderDeployment(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: objectMeta(SiteName(g.Name, s.Name), g, siteLabels(g, s.Name)),
		Spec: appsv1.DeploymentSpec{
			Replicas:             ptr.To[int32](1),
			RevisionHistoryLimit: ptr.To[int32](3),
			Selector:             &metav1.LabelSelector{MatchLabels: siteSelector(g, s.Name)},
			// Recreate: two mysqld on one PVC must never run at once.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				// The my.cnf hash: mysqld reads my.cnf only when it starts,
				// so a change of it is a change of the template, rolled out
				// in order like any other (rollout.go).
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels(g, s.Name),
					Annotations: map[string]string{v1alpha1.AnnotationConfigHash: r.configHash(g, s)}},
				Spec: r.renderPodSpec(g, s),
			},
		},
	}
}

func (r *Router) renderPodSpec(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) corev1.PodSpec {
	return r.withReclone(g, r.withTLS(g, s, corev1.PodSpec{
		NodeSelector:                  NodeSelector(s),
		TerminationGracePeriodSeconds: ptr.To(int64(r.stopDelay(g).Seconds())),
		EnableServiceLinks:            ptr.To(false),
		// The sidecar reads mysqld's pid file and, when a fence cannot
		// complete in its budget, SIGKILLs that pid: both need one process
		// namespace for the Pod.
		ShareProcessNamespace: ptr.To(true),
		// A site that lost the primary role keeps running on its tainted nodes
		// so that it can rejoin as a replica.
		Tolerations: []corev1.Toleration{{
			Key: v1alpha1.TaintLostPrimary, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
		}},
		Containers: []corev1.Container{r.withLifecycle(g, r.mysqldContainer(g)), r.sidecarContainer(g, s)},
		Volumes: []corev1.Volume{
			{Name: volData, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(g.Name, s.Name)}}},
			{Name: volConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(g.Name, s.Name)}}}},
			{Name: volInit, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: InitSecretName(g.Name), DefaultMode: ptr.To[int32](0o444)}}},
			{Name: volRun, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			// The public view keys; the kubelet refreshes the file when the
			// operator rotates them, and the sidecar re-reads it.
			{Name: volViewKeys, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: ViewKeysConfigMap}}}},
		},
	}))
}

func (r *Router) mysqldContainer(g *v1alpha1.MysqlFailoverGroup) corev1.Container {
	return corev1.Container{
		Name:    ContainerMysqld,
		Image:   r.mysqlImage(g),
		Command: r.opts.MysqldCommand,
		Args:    []string{"--defaults-file=" + ConfigFile},
		// The official images' entrypoints refuse an empty datadir without a
		// root password setting. Root is not used: the operator account is.
		Env: []corev1.EnvVar{
			{Name: "MARIADB_RANDOM_ROOT_PASSWORD", Value: "1"},
			{Name: "MYSQL_RANDOM_ROOT_PASSWORD", Value: "yes"},
		},
		Ports: []corev1.ContainerPort{{Name: PortNameMySQL, ContainerPort: MySQLPort, Protocol: corev1.ProtocolTCP}},
		// Probes and the preStop hook: withLifecycle (lifecycle.go).
		VolumeMounts: []corev1.VolumeMount{
			{Name: volData, MountPath: DataDir},
			{Name: volConfig, MountPath: ConfigDir, ReadOnly: true},
			{Name: volInit, MountPath: InitDir, ReadOnly: true},
			{Name: volRun, MountPath: RunDir},
		},
	}
}
