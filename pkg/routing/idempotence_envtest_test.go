//go:build envtest

package routing_test

import (
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// versions maps "Kind/name" to resourceVersion for every object in ns.
func versions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lists := map[string]client.ObjectList{
		"Deployment": &appsv1.DeploymentList{}, "Service": &corev1.ServiceList{},
		"ConfigMap": &corev1.ConfigMapList{}, "Secret": &corev1.SecretList{},
		"PersistentVolumeClaim": &corev1.PersistentVolumeClaimList{}, "DNSEndpoint": &externaldns.DNSEndpointList{},
	}
	for kind, list := range lists {
		if err := cp.Client.List(testContext(t), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("list %s: %v", kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			m, _ := meta.Accessor(o)
			out[kind+"/"+m.GetName()] = m.GetResourceVersion()
		}
	}
	return out
}

func TestSecondConvergeChangesNothing(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "ledger", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc"}},
		map[string]any{"dns": map[string]any{"hostname": "ledger.example.com"}, "mysql": map[string]any{"config": "max_connections=50"}})
	r := newRouter()
	converge(t, r, g)
	before := versions(t, ns)
	if len(before) < 3*4+2+5+1 { // per site 4 objects, 2 role Services, 5 Secrets, 1 DNSEndpoint
		t.Fatalf("only %d objects after the first Converge: %v", len(before), before)
	}
	converge(t, r, g)
	converge(t, newRouter(), g) // a restarted operator renders the same objects
	after := versions(t, ns)
	if !maps.Equal(before, after) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("%s: resourceVersion %s -> %s", k, before[k], v)
			}
		}
	}
}

func TestSpecChangeIsApplied(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "spec", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}}, nil)
	r := newRouter()
	converge(t, r, g)
	g.Spec.MySQL.Config = "max_connections=999"
	g.Spec.MySQL.Image = "mariadb:11.4"
	converge(t, r, g)
	var cm corev1.ConfigMap
	get(t, ns, routing.ConfigMapName(g.Name, "a"), &cm)
	if !strings.Contains(cm.Data["my.cnf"], "max_connections=999") {
		t.Errorf("my.cnf not updated:\n%s", cm.Data["my.cnf"])
	}
	// The Deployments are left to the ordered update: stale until applied one by one.
	var d appsv1.Deployment
	get(t, ns, routing.SiteName(g.Name, "b"), &d)
	if img := d.Spec.Template.Spec.Containers[0].Image; img == "mariadb:11.4" {
		t.Errorf("Converge changed the Pod template of an existing Deployment (image %s)", img)
	}
	ctx := testContext(t)
	w, err := r.SiteWorkloads(ctx, cp.Client, g)
	if err != nil {
		t.Fatal(err)
	}
	if !w["a"].Stale || !w["b"].Stale {
		t.Fatalf("workloads %+v: want both sites stale", w)
	}
	if err := r.ApplySiteWorkload(ctx, g, "b", w["b"].ResourceVersion); err != nil {
		t.Fatal(err)
	}
	get(t, ns, routing.SiteName(g.Name, "b"), &d)
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "mariadb:11.4" {
		t.Errorf("mysqld image %s, want mariadb:11.4", img)
	}
	if w, _ = r.SiteWorkloads(ctx, cp.Client, g); !w["a"].Stale || w["b"].Stale {
		t.Errorf("after updating b: %+v, want only a stale", w)
	}
	// An apply on a resourceVersion read before is refused: someone changed it since.
	if err := r.ApplySiteWorkload(ctx, g, "a", "1"); err == nil {
		t.Errorf("apply on an old resourceVersion succeeded")
	}
}

func TestExistingSecretsAreNeverOverwritten(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	mine := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "my-app-creds", Namespace: ns},
		Data:       map[string][]byte{"username": []byte("shop"), "password": []byte("s3cr3t'pw"), "database": []byte("shop")},
	}
	if err := cp.Client.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	g := createGroup(t, ns, "vault", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}}, map[string]any{
		"mysql": map[string]any{"credentials": map[string]any{"application": map[string]any{"name": "my-app-creds"}}},
	})
	r := newRouter()
	converge(t, r, g)
	first, err := r.Credentials(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	converge(t, r, g)
	second, err := r.Credentials(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("credentials changed between Converges:\n%+v\n%+v", first, second)
	}
	want := routing.Account{Username: "shop", Password: "s3cr3t'pw"}
	if first.Application != want || first.AppDatabase != "shop" {
		t.Errorf("application %+v database %q, want the user's Secret", first.Application, first.AppDatabase)
	}
	var got corev1.Secret
	get(t, ns, "my-app-creds", &got)
	if got.ResourceVersion != mine.ResourceVersion || len(got.OwnerReferences) != 0 {
		t.Errorf("user Secret rewritten: resourceVersion %s -> %s, owners %v",
			mine.ResourceVersion, got.ResourceVersion, got.OwnerReferences)
	}
	var init corev1.Secret
	get(t, ns, routing.InitSecretName(g.Name), &init)
	if !strings.Contains(string(init.Data["init.sql"]), `ALTER USER 'shop'@'%' IDENTIFIED BY 's3cr3t\'pw';`) {
		t.Errorf("init SQL does not use the user's application Secret:\n%s", init.Data["init.sql"])
	}
	checkSidecarSecret(t, g, "my-app-creds")
}

// checkSidecarSecret: the sidecar's DSN and system users come from the
// Secrets, and the login its readiness check makes from the application's
// Secret, appSecret.
func checkSidecarSecret(t *testing.T, g *v1alpha1.MysqlFailoverGroup, appSecret string) {
	t.Helper()
	var d appsv1.Deployment
	get(t, g.Namespace, routing.SiteName(g.Name, "a"), &d)
	sc := container(t, d.Spec.Template.Spec, routing.ContainerSidecar)
	want := map[string]string{
		routing.EnvMySQLUser:        routing.SecretName(g.Name, routing.AccountOperator) + "/username",
		routing.EnvMySQLPassword:    routing.SecretName(g.Name, routing.AccountOperator) + "/password",
		routing.EnvReplicationUser:  routing.SecretName(g.Name, routing.AccountReplication) + "/username",
		routing.EnvMonitorUser:      routing.SecretName(g.Name, routing.AccountMonitor) + "/username",
		routing.EnvAppLoginUser:     appSecret + "/username",
		routing.EnvAppLoginPassword: appSecret + "/password",
	}
	got := map[string]string{}
	for _, e := range sc.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			got[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("sidecar env from Secrets %v, want %v", got, want)
	}
	args := strings.Join(sc.Args, " ")
	if !strings.Contains(args, "--system-users=$(BLOODRAVEN_MYSQL_USER),$(BLOODRAVEN_ACCOUNT_REPLICATION),$(BLOODRAVEN_ACCOUNT_MONITOR)") {
		t.Errorf("sidecar args %q: want --system-users naming the three system accounts", args)
	}
}

func TestConvergeRefusesWithoutOperatorURL(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "nourl", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}}, nil)
	err := routing.New(cp.Client, cp.Scheme, routing.Options{}).Converge(testContext(t), g)
	if err == nil || !strings.Contains(err.Error(), "OperatorURL") {
		t.Errorf("Converge without OperatorURL: %v, want an error naming it", err)
	}
}
