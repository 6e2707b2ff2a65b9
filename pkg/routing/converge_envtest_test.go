//go:build envtest

package routing_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

func TestObjectsAreRenderedAsSpecified(t *testing.T) {
	cases := []struct {
		name    string
		sites   []site
		dnsSite string // the site the DNSEndpoint starts on
	}{
		{
			name:    "2 sites",
			sites:   []site{{name: "iad", zone: "us-east-1a"}, {name: "pdx", zone: "us-west-2a", nodeSelector: map[string]string{"pool": "db"}}},
			dnsSite: "iad",
		},
		{
			name: "3 sites, the first one dr-only",
			sites: []site{
				{name: "fra", zone: "eu-central-1a", role: string(v1alpha1.RoleDROnly)},
				{name: "iad", nodeSelector: map[string]string{"pool": "db-iad"}},
				{name: "pdx", zone: "us-west-2a", lbIP: "203.0.113.7"},
			},
			dnsSite: "iad",
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			g := createGroup(t, ns, "orders", tc.sites, map[string]any{
				"mysql": map[string]any{"image": "mariadb:10.11.9", "config": "max_connections=300",
					"storage": map[string]any{"size": "5Gi", "storageClassName": "fast"}},
				"sidecar": map[string]any{"image": "example.com/sidecar:v1"},
				"dns":     map[string]any{"hostname": "orders.db.example.com", "ttl": int64(30 + i)},
			})
			converge(t, newRouter(), g)
			ids := map[string]string{}
			for _, s := range tc.sites {
				checkDeployment(t, g, s)
				checkPVC(t, g, s)
				checkSiteService(t, g, s)
				ids[checkConfigMap(t, g, s)] = s.name
			}
			if len(ids) != len(tc.sites) {
				t.Errorf("server_ids %v are not distinct per site", ids)
			}
			checkRoleServices(t, g)
			checkSecrets(t, g)
			checkDNSEndpoint(t, g, tc.dnsSite, int64(30+i))
		})
	}
}

func checkDeployment(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site) {
	t.Helper()
	var d appsv1.Deployment
	get(t, g.Namespace, routing.SiteName(g.Name, s.name), &d)
	checkOwned(t, &d, g)
	want := map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelSite: s.name}
	if !maps.Equal(d.Spec.Selector.MatchLabels, want) {
		t.Errorf("%s: selector %v, want %v", d.Name, d.Spec.Selector.MatchLabels, want)
	}
	want[v1alpha1.LabelRole] = v1alpha1.RoleReplica
	for k, v := range want {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: template label %s=%q, want %q", d.Name, k, d.Spec.Template.Labels[k], v)
		}
	}
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("%s: replicas %d strategy %s, want 1 Recreate", d.Name, *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	if tg := *pod.TerminationGracePeriodSeconds; tg != 30 {
		t.Errorf("%s: terminationGracePeriodSeconds %d, want spec.instance.stopDelay's default 30", d.Name, tg)
	}
	wantSel := maps.Clone(s.nodeSelector)
	if wantSel == nil {
		wantSel = map[string]string{}
	}
	if s.zone != "" {
		wantSel[routing.ZoneLabel] = s.zone
	}
	if !maps.Equal(pod.NodeSelector, wantSel) {
		t.Errorf("%s: nodeSelector %v, want %v", d.Name, pod.NodeSelector, wantSel)
	}
	checkVolumes(t, g, s, pod)
	checkMysqld(t, g, d.Name, container(t, pod, routing.ContainerMysqld))
	checkSidecar(t, g, s, container(t, pod, routing.ContainerSidecar))
}

func container(t *testing.T, pod corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range pod.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s in %v", name, pod.Containers)
	return corev1.Container{}
}

func checkVolumes(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site, pod corev1.PodSpec) {
	t.Helper()
	mounts := map[string]string{}
	for _, m := range container(t, pod, routing.ContainerMysqld).VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	data, cfg, init := vols[mounts[routing.DataDir]], vols[mounts[routing.ConfigDir]], vols[mounts[routing.InitDir]]
	if data.PersistentVolumeClaim == nil || data.PersistentVolumeClaim.ClaimName != routing.PVCName(g.Name, s.name) {
		t.Errorf("%s: %s is not the PVC: %+v", s.name, routing.DataDir, data)
	}
	if cfg.ConfigMap == nil || cfg.ConfigMap.Name != routing.ConfigMapName(g.Name, s.name) {
		t.Errorf("%s: %s is not the ConfigMap: %+v", s.name, routing.ConfigDir, cfg)
	}
	if init.Secret == nil || init.Secret.SecretName != routing.InitSecretName(g.Name) {
		t.Errorf("%s: %s is not the init SQL Secret: %+v", s.name, routing.InitDir, init)
	}
}

func checkMysqld(t *testing.T, g *v1alpha1.MysqlFailoverGroup, name string, c corev1.Container) {
	t.Helper()
	if c.Image != g.Spec.MySQL.Image || !slices.Equal(c.Args, []string{"--defaults-file=/etc/mysql/bloodraven/my.cnf"}) {
		t.Errorf("%s mysqld: image %s args %v", name, c.Image, c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 3306 {
		t.Errorf("%s mysqld: ports %+v, want 3306", name, c.Ports)
	}
	probes := map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz/live": c.LivenessProbe}
	probes["/healthz/live "] = c.StartupProbe
	for path, p := range probes {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != strings.TrimSpace(path) || p.HTTPGet.Port != intstr.FromInt32(8080) {
			t.Errorf("%s mysqld: probe %+v, want the sidecar's %s on 8080", name, p, path)
		}
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.HTTPGet == nil ||
		c.Lifecycle.PreStop.HTTPGet.Path != "/lifecycle/stop" {
		t.Errorf("%s mysqld: preStop %+v, want the sidecar's /lifecycle/stop", name, c.Lifecycle)
	}
}

func checkSidecar(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site, c corev1.Container) {
	t.Helper()
	if c.Image != "example.com/sidecar:v1" || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("%s sidecar: image %s ports %+v", s.name, c.Image, c.Ports)
	}
	for path, p := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromInt32(8080) {
			t.Errorf("%s sidecar: probe %+v, want httpGet %s on 8080", s.name, p, path)
		}
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--site=" + s.name, "--group=" + g.Name, "--namespace=" + g.Namespace,
		"--operator-url=" + operatorURL, "--lease-timeout=20s", "--peer-check-interval=5s", "--listen=:8080",
		"@unix(/var/run/mysqld/mysqld.sock)/"} {
		if !strings.Contains(args, want) {
			t.Errorf("%s sidecar args %q lack %q", s.name, args, want)
		}
	}
	for _, other := range g.Spec.Sites {
		peer := other.Name + "=http://" + routing.SiteServiceHost(g.Namespace, g.Name, other.Name) + ":8080"
		if got := strings.Contains(args, peer); got != (other.Name != s.name) {
			t.Errorf("%s sidecar args %q: peer %s listed %v", s.name, args, other.Name, got)
		}
	}
}

func checkPVC(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site) {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	get(t, g.Namespace, routing.PVCName(g.Name, s.name), &pvc)
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(resource.MustParse("5Gi")) != 0 || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast" {
		t.Errorf("%s: size %s class %v, want 5Gi fast", pvc.Name, size.String(), pvc.Spec.StorageClassName)
	}
	if len(pvc.OwnerReferences) != 0 {
		t.Errorf("%s: owner references %v: deleting the group must not delete data", pvc.Name, pvc.OwnerReferences)
	}
	if pvc.Labels[v1alpha1.LabelSite] != s.name {
		t.Errorf("%s: labels %v", pvc.Name, pvc.Labels)
	}
}

func checkSiteService(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site) {
	t.Helper()
	var svc corev1.Service
	get(t, g.Namespace, routing.SiteName(g.Name, s.name), &svc)
	checkOwned(t, &svc, g)
	want := map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelSite: s.name}
	if !maps.Equal(svc.Spec.Selector, want) || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("%s: selector %v type %s, want %v ClusterIP", svc.Name, svc.Spec.Selector, svc.Spec.Type, want)
	}
	checkPorts(t, svc, map[string]int32{"mysql": 3306, "sidecar": 8080})
}

func checkPorts(t *testing.T, svc corev1.Service, want map[string]int32) {
	t.Helper()
	got := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		got[p.Name] = p.Port
		if p.TargetPort.IntVal != p.Port {
			t.Errorf("%s: port %s targets %s", svc.Name, p.Name, p.TargetPort.String())
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: ports %v, want %v", svc.Name, got, want)
	}
}

// checkConfigMap returns the site's server_id.
func checkConfigMap(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s site) string {
	t.Helper()
	var cm corev1.ConfigMap
	get(t, g.Namespace, routing.ConfigMapName(g.Name, s.name), &cm)
	checkOwned(t, &cm, g)
	cnf := cm.Data["my.cnf"]
	for _, line := range []string{"read_only=ON", "gtid_strict_mode=ON", "log_slave_updates=ON", "gtid_domain_id=0",
		"binlog_format=ROW", "log_bin=binlog", "skip_name_resolve=ON", "max_connections=300", "init_file=" + routing.InitFile} {
		if !strings.Contains(cnf, "\n"+line+"\n") {
			t.Errorf("%s: my.cnf lacks %q:\n%s", cm.Name, line, cnf)
		}
	}
	for _, l := range strings.Split(cnf, "\n") {
		if id, ok := strings.CutPrefix(l, "server_id="); ok {
			return id
		}
	}
	t.Errorf("%s: no server_id", cm.Name)
	return ""
}

func checkRoleServices(t *testing.T, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	routable := v1alpha1.LabelRoutable
	for name, want := range map[string]map[string]string{
		routing.PrimaryServiceName(g.Name):  {v1alpha1.LabelGroup: g.Name, v1alpha1.LabelRole: v1alpha1.RolePrimary},
		routing.ReplicasServiceName(g.Name): {v1alpha1.LabelGroup: g.Name, v1alpha1.LabelRole: v1alpha1.RoleReplica, routable: "true"},
		routing.AnyServiceName(g.Name):      {v1alpha1.LabelGroup: g.Name, routable: "true"},
	} {
		var svc corev1.Service
		get(t, g.Namespace, name, &svc)
		checkOwned(t, &svc, g)
		if !maps.Equal(svc.Spec.Selector, want) {
			t.Errorf("%s: selector %v, want %v", name, svc.Spec.Selector, want)
		}
		checkPorts(t, svc, map[string]int32{"mysql": 3306})
	}
}

func checkSecrets(t *testing.T, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	for _, role := range []string{routing.AccountOperator, routing.AccountReplication, routing.AccountApplication, routing.AccountMonitor} {
		var sec corev1.Secret
		get(t, g.Namespace, routing.SecretName(g.Name, role), &sec)
		checkOwned(t, &sec, g)
		if len(sec.Data["username"]) == 0 || len(sec.Data["password"]) < 20 {
			t.Errorf("%s: username %q, password of %d bytes", sec.Name, sec.Data["username"], len(sec.Data["password"]))
		}
	}
	var init corev1.Secret
	get(t, g.Namespace, routing.InitSecretName(g.Name), &init)
	checkOwned(t, &init, g)
	sql := string(init.Data["init.sql"])
	var appGrants []string
	for _, l := range strings.Split(sql, "\n") {
		if strings.HasPrefix(l, "GRANT ") && strings.Contains(l, " TO 'app'@'%'") {
			appGrants = append(appGrants, l)
		}
	}
	if len(appGrants) != 1 || !strings.Contains(appGrants[0], " ON `app`.* ") {
		t.Fatalf("application grants %q, want one on `app`.*", appGrants)
	}
	for _, bad := range []string{"READ_ONLY ADMIN", "READ ONLY ADMIN", "SUPER", "ALL PRIVILEGES"} {
		if strings.Contains(appGrants[0], bad) {
			t.Errorf("application grant holds %s: %s", bad, appGrants[0])
		}
	}
}

func checkDNSEndpoint(t *testing.T, g *v1alpha1.MysqlFailoverGroup, siteName string, ttl int64) {
	t.Helper()
	var ep externaldns.DNSEndpoint
	get(t, g.Namespace, routing.DNSEndpointName(g.Name), &ep)
	checkOwned(t, &ep, g)
	var svc corev1.Service
	get(t, g.Namespace, routing.SiteName(g.Name, siteName), &svc)
	if len(ep.Spec.Endpoints) != 1 {
		t.Fatalf("dnsendpoint: %d endpoints, want 1", len(ep.Spec.Endpoints))
	}
	e := ep.Spec.Endpoints[0]
	if e.DNSName != "orders.db.example.com" || e.RecordType != "A" || int64(e.RecordTTL) != ttl ||
		!slices.Equal(e.Targets, []string{svc.Spec.ClusterIP}) {
		t.Errorf("dnsendpoint %+v, want orders.db.example.com A %d -> %s (%s)", e, ttl, svc.Spec.ClusterIP, siteName)
	}
}
