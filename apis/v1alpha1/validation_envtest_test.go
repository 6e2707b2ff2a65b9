//go:build envtest

package v1alpha1_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
)

var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

func minimal(name string) map[string]any {
	return map[string]any{
		"apiVersion": "bloodraven.shipstream.io/v1alpha1",
		"kind":       "MysqlFailoverGroup",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"sites": []any{
				map[string]any{"name": "iad", "zone": "iad"},
				map[string]any{"name": "pdx", "zone": "pdx"},
			},
		},
	}
}

func create(t *testing.T, obj map[string]any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cp.Client.Create(ctx, &unstructured.Unstructured{Object: obj})
}

func TestCRDInstalledAndMinimalGroupDefaulted(t *testing.T) {
	if err := create(t, minimal("defaults")); err != nil {
		t.Fatalf("minimal group rejected: %v", err)
	}
	var g v1alpha1.MysqlFailoverGroup
	key := client.ObjectKey{Namespace: "default", Name: "defaults"}
	if err := cp.Client.Get(context.Background(), key, &g); err != nil {
		t.Fatalf("get: %v", err)
	}
	s := g.Spec
	checks := []struct {
		name      string
		got, want any
	}{
		{"pollInterval", s.PollInterval.Duration, 2 * time.Second},
		{"failureThreshold", s.FailureThreshold, int32(3)},
		{"recoveryThreshold", s.RecoveryThreshold, int32(2)},
		{"failoverCooldown", s.FailoverCooldown.Duration, 5 * time.Minute},
		{"site role", s.Sites[0].Role, v1alpha1.RolePrimaryCandidate},
		{"mysql.flavor", s.MySQL.Flavor, v1alpha1.FlavorAuto},
		{"mysql.image", s.MySQL.Image, "mariadb:10.11"},
		{"mysql.storage.size", s.MySQL.Storage.Size.Cmp(resource.MustParse("10Gi")), 0},
		{"sidecar.leaseTimeout", s.Sidecar.LeaseTimeout.Duration, 20 * time.Second},
		{"sidecar.peerCheckInterval", s.Sidecar.PeerCheckInterval.Duration, 5 * time.Second},
		{"sidecar.image non-empty", s.Sidecar.Image != "", true},
		{"plannedFailover.maxLagWait", s.PlannedFailover.MaxLagWait.Duration, 5 * time.Minute},
		{"plannedFailover.drainTimeout", s.PlannedFailover.DrainTimeout.Duration, 30 * time.Second},
		{"instance.startDelay", s.Instance.StartDelay.Duration, 30 * time.Second},
		{"instance.stopDelay", s.Instance.StopDelay.Duration, 30 * time.Second},
		{"instance.switchoverDelay unset", s.Instance.SwitchoverDelay == nil, true},
		{"failover.salvageTimeout", s.Failover.SalvageTimeout != nil && s.Failover.SalvageTimeout.Duration == 10*time.Second, true},
		{"failover.drainSlowTimeout", s.Failover.DrainSlowTimeout != nil && s.Failover.DrainSlowTimeout.Duration == 5*time.Minute, true},
		{"plannedFailover.onCooldown", s.PlannedFailover.OnCooldown, v1alpha1.CooldownReject},
		{"dragonfly.enabled", s.Dragonfly.Enabled, false},
		{"replication.maxLagSeconds", s.Replication.MaxLagSeconds, int32(30)},
		{"services unset", s.Services == nil, true},
		{"dragonfly.maxSyncWait", s.Dragonfly.PlannedFailover.MaxSyncWait.Duration, 30 * time.Second},
		{"dragonfly.onSyncTimeout", s.Dragonfly.PlannedFailover.OnSyncTimeout, v1alpha1.SyncTimeoutProceed},
		{"mysql.semiSync.enabled", s.MySQL.SemiSync.Enabled, false},
		{"mysql.semiSync.timeoutMillis", s.MySQL.SemiSync.TimeoutMillis, int64(1000)},
		{"mysql.semiSync.dataDurability", s.MySQL.SemiSync.DataDurability, v1alpha1.DurabilityPreferred},
		{"mysql.semiSync.minSyncReplicas", s.MySQL.SemiSync.MinSyncReplicas, int32(1)},
		{"mysql.semiSync.maxSyncReplicas", s.MySQL.SemiSync.MaxSyncReplicas, int32(1)},
		{"updates.primaryUpdateMethod", s.Updates.PrimaryUpdateMethod, v1alpha1.UpdateSwitchover},
		{"updates.primaryUpdateStrategy", s.Updates.PrimaryUpdateStrategy, v1alpha1.UpdateUnsupervised},
		{"recovery.maxCloneRate unlimited", s.Recovery.CloneRate(), int64(0)},
		{"recovery.cloneTimeout", s.Recovery.CloneTimeout.Duration, 6 * time.Hour},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestRecoveryRateAccepted: a clone rate is a quantity of bytes per second.
func TestRecoveryRateAccepted(t *testing.T) {
	obj := minimal("clone-rate")
	set(obj, "recovery.maxCloneRate", "100Mi")
	if err := create(t, obj); err != nil {
		t.Fatalf("rejected: %v", err)
	}
	var g v1alpha1.MysqlFailoverGroup
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "clone-rate"}, &g); err != nil {
		t.Fatal(err)
	}
	if got := g.Spec.Recovery.CloneRate(); got != 100<<20 {
		t.Fatalf("clone rate %d, want %d", got, 100<<20)
	}
}

func TestDNSDefaultsTTL(t *testing.T) {
	obj := minimal("dns-ttl")
	obj["spec"].(map[string]any)["dns"] = map[string]any{"hostname": "orders.db.example.com"}
	if err := create(t, obj); err != nil {
		t.Fatalf("rejected: %v", err)
	}
	var g v1alpha1.MysqlFailoverGroup
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "dns-ttl"}, &g); err != nil {
		t.Fatal(err)
	}
	if g.Spec.DNS == nil || g.Spec.DNS.TTL != 60 {
		t.Fatalf("dns ttl default: %+v", g.Spec.DNS)
	}
}

// set walks a dotted path in a spec map (list indexes as numbers) and sets v.
func set(obj map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	var cur any = obj["spec"]
	for i, p := range parts {
		last := i == len(parts)-1
		switch node := cur.(type) {
		case map[string]any:
			if last {
				node[p] = v
				return
			}
			if _, ok := node[p]; !ok {
				node[p] = map[string]any{}
			}
			cur = node[p]
		case []any:
			var idx int
			_ = json.Unmarshal([]byte(p), &idx)
			if last {
				node[idx] = v
				return
			}
			cur = node[idx]
		}
	}
}

func TestInvalidSpecsAreRejectedWithReadableMessages(t *testing.T) {
	site := func(name, role string) map[string]any {
		return map[string]any{"name": name, "zone": name, "role": role}
	}
	cases := []struct {
		name string
		edit func(spec map[string]any, obj map[string]any)
		want string
	}{
		{"one site only", func(s, _ map[string]any) { s["sites"] = []any{site("iad", "primary-candidate")} }, "should have at least 2 items"},
		{"one primary candidate", func(s, _ map[string]any) {
			s["sites"] = []any{site("iad", "primary-candidate"), site("pdx", "dr-only")}
		}, "at least two sites with role primary-candidate"},
		{"duplicate site names", func(s, _ map[string]any) {
			s["sites"] = []any{site("iad", "primary-candidate"), site("iad", "primary-candidate")}
		}, "site names must be unique"},
		{"site name not a DNS label", func(_, o map[string]any) { set(o, "sites.0.name", "IAD_1") }, "site name must be a DNS label"},
		{"unknown role", func(_, o map[string]any) { set(o, "sites.1.role", "leader") }, `Unsupported value: "leader"`},
		{"site without placement", func(s, _ map[string]any) {
			s["sites"] = []any{map[string]any{"name": "iad"}, site("pdx", "primary-candidate")}
		}, "each site needs a zone or a nodeSelector"},
		{"negative pollInterval", func(_, o map[string]any) { set(o, "pollInterval", "-2s") }, "pollInterval must be a positive duration"},
		{"zero failoverCooldown", func(_, o map[string]any) { set(o, "failoverCooldown", "0s") }, "failoverCooldown must be a positive duration"},
		{"garbage duration", func(_, o map[string]any) { set(o, "plannedFailover.maxLagWait", "five minutes") }, "plannedFailover.maxLagWait must be a positive duration"},
		{"negative salvage timeout", func(_, o map[string]any) { set(o, "failover.salvageTimeout", "-1s") }, "failover.salvageTimeout must be zero (salvage off) or a positive duration"},
		{"zero drainSlowTimeout", func(_, o map[string]any) { set(o, "failover.drainSlowTimeout", "0s") }, "failover.drainSlowTimeout must be a duration from 1s to 24h"},
		{"drainSlowTimeout past a day", func(_, o map[string]any) { set(o, "failover.drainSlowTimeout", "25h") }, "failover.drainSlowTimeout must be a duration from 1s to 24h"},
		{"drainSlowTimeout not a duration", func(_, o map[string]any) { set(o, "failover.drainSlowTimeout", "a while") }, "failover.drainSlowTimeout must be a duration from 1s to 24h"},
		{"zero failureThreshold", func(_, o map[string]any) { set(o, "failureThreshold", 0) }, "failureThreshold in body should be greater than or equal to 1"},
		{"lease shorter than 3 checks", func(_, o map[string]any) {
			set(o, "sidecar.leaseTimeout", "10s")
			set(o, "sidecar.peerCheckInterval", "5s")
		}, "leaseTimeout must be at least 3 × sidecar.peerCheckInterval"},
		{"bad flavor", func(_, o map[string]any) { set(o, "mysql.flavor", "postgres") }, `Unsupported value: "postgres"`},
		{"bad onCooldown", func(_, o map[string]any) { set(o, "plannedFailover.onCooldown", "later") }, `Unsupported value: "later"`},
		{"bad onSyncTimeout", func(_, o map[string]any) { set(o, "dragonfly.plannedFailover.onSyncTimeout", "retry") }, `Unsupported value: "retry"`},
		{"bad dataDurability", func(_, o map[string]any) { set(o, "mysql.semiSync.dataDurability", "always") }, `Unsupported value: "always"`},
		{"stopDelay too short for a clean stop", func(_, o map[string]any) { set(o, "instance.stopDelay", "2s") }, "instance.stopDelay must be a duration from 5s to 1h"},
		{"stopDelay too long", func(_, o map[string]any) { set(o, "instance.stopDelay", "2h") }, "instance.stopDelay must be a duration from 5s to 1h"},
		{"startDelay not a duration", func(_, o map[string]any) { set(o, "instance.startDelay", "soon") }, "instance.startDelay must be a duration from 5s to 24h"},
		{"zero switchoverDelay", func(_, o map[string]any) { set(o, "instance.switchoverDelay", "0s") }, "instance.switchoverDelay must be a duration from 1s to 24h"},
		{"bad primaryUpdateMethod", func(_, o map[string]any) { set(o, "updates.primaryUpdateMethod", "delete") }, `Unsupported value: "delete"`},
		{"bad primaryUpdateStrategy", func(_, o map[string]any) { set(o, "updates.primaryUpdateStrategy", "manual") }, `Unsupported value: "manual"`},
		{"semi-sync replicas as many as the sites", func(_, o map[string]any) {
			set(o, "mysql.semiSync.enabled", true)
			set(o, "mysql.semiSync.maxSyncReplicas", 2)
		}, "maxSyncReplicas must be less than the number of sites"},
		{"semi-sync min above max", func(_, o map[string]any) {
			set(o, "mysql.semiSync.minSyncReplicas", 3)
			set(o, "mysql.semiSync.maxSyncReplicas", 2)
		}, "minSyncReplicas cannot be more than maxSyncReplicas"},
		{"semi-sync two acknowledgements on MariaDB", func(_, o map[string]any) {
			set(o, "mysql.flavor", "mariadb")
			set(o, "mysql.semiSync.minSyncReplicas", 2)
			set(o, "mysql.semiSync.maxSyncReplicas", 2)
		}, "MariaDB waits for one semi-sync acknowledgement"},
		{"zero minSyncReplicas", func(_, o map[string]any) { set(o, "mysql.semiSync.minSyncReplicas", 0) },
			"minSyncReplicas in body should be greater than or equal to 1"},
		{"bad dns hostname", func(_, o map[string]any) { set(o, "dns", map[string]any{"hostname": "Not A Host!"}) }, "dns.hostname must be a DNS name"},
		{"dns without hostname", func(_, o map[string]any) { set(o, "dns", map[string]any{"ttl": 30}) }, "spec.dns.hostname: Required value"},
		{"negative maxCloneRate", func(_, o map[string]any) { set(o, "recovery.maxCloneRate", "-10Mi") }, "recovery.maxCloneRate must be zero (unlimited) or a positive"},
		{"zero cloneTimeout", func(_, o map[string]any) { set(o, "recovery.cloneTimeout", "0s") }, "recovery.cloneTimeout must be a positive duration"},
		{"backup endpoint with a path", func(_, o map[string]any) { set(o, "backup", backupSpec("endpoint", "https://s3.example.com/bucket")) },
			"backup.objectStore.endpoint must be http(s)://host[:port] with no path"},
		{"backup bucket with capitals", func(_, o map[string]any) { set(o, "backup", backupSpec("bucket", "My_Bucket")) },
			"backup.objectStore.bucket must be an S3 bucket name"},
		{"backup prefix climbing out", func(_, o map[string]any) { set(o, "backup", backupSpec("prefix", "a/../b")) },
			"backup.objectStore.prefix must be a relative key prefix"},
		{"backup without credentials", func(_, o map[string]any) {
			b := backupSpec("bucket", "backups")
			delete(b["objectStore"].(map[string]any), "credentialsSecret")
			set(o, "backup", b)
		}, "credentialsSecret: Required value"},
		{"backup schedule not cron", func(_, o map[string]any) {
			b := backupSpec("bucket", "backups")
			b["schedules"] = []any{map[string]any{"name": "nightly", "schedule": "every night"}}
			set(o, "backup", b)
		}, "backup schedule must be five cron fields"},
		{"backup schedules with one name", func(_, o map[string]any) {
			b := backupSpec("bucket", "backups")
			b["schedules"] = []any{map[string]any{"name": "n", "schedule": "0 3 * * *"}, map[string]any{"name": "n", "schedule": "@hourly"}}
			set(o, "backup", b)
		}, "backup schedule names must be unique"},
		{"backup maxAge in minutes", func(_, o map[string]any) {
			b := backupSpec("bucket", "backups")
			b["retentionPolicy"] = map[string]any{"maxAge": "90m"}
			set(o, "backup", b)
		}, "backup.retentionPolicy.maxAge must be hours or days"},
		{"site named like a role Service", func(_, o map[string]any) { set(o, "sites.1.name", "replicas") },
			"site name cannot be primary, replicas or any"},
		{"primary Service disabled", func(_, o map[string]any) { set(o, "services.disabledDefaultServices", []any{"rw"}) },
			"the primary Service (rw) cannot be disabled"},
		{"unknown default Service disabled", func(_, o map[string]any) { set(o, "services.disabledDefaultServices", []any{"reads"}) },
			`Unsupported value: "reads"`},
		{"additional Service named like a default", func(_, o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "any", "selectorType": "r"}})
		}, "services.additional name cannot be primary, replicas or any"},
		{"additional Service named like a site", func(_, o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "pdx", "selectorType": "ro"}})
		}, "services.additional name cannot be a site's name"},
		{"two additional Services with one name", func(_, o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "lb", "selectorType": "rw"},
				map[string]any{"name": "lb", "selectorType": "ro"}})
		}, "services.additional names must be unique"},
		{"additional Service with an unknown selector", func(_, o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "lb", "selectorType": "writer"}})
		}, `Unsupported value: "writer"`},
		{"ExternalName template", func(_, o map[string]any) {
			set(o, "services.template", map[string]any{"spec": map[string]any{"type": "ExternalName"}})
		},
			`Unsupported value: "ExternalName"`},
		{"externalTrafficPolicy on a ClusterIP", func(_, o map[string]any) {
			set(o, "services.template", map[string]any{"spec": map[string]any{"externalTrafficPolicy": "Local"}})
		}, "externalTrafficPolicy needs type NodePort or LoadBalancer"},
		{"source ranges without a load balancer", func(_, o map[string]any) {
			set(o, "services.template", map[string]any{"spec": map[string]any{"type": "NodePort", "loadBalancerSourceRanges": []any{"10.0.0.0/8"}}})
		}, "loadBalancerSourceRanges needs type LoadBalancer"},
		{"negative maxLagSeconds", func(_, o map[string]any) { set(o, "replication.maxLagSeconds", -1) },
			"maxLagSeconds in body should be greater than or equal to 0"},
		{"seventeen sites", func(s, _ map[string]any) {
			var sites []any
			for i := 0; i < 17; i++ {
				sites = append(sites, site("s"+string(rune('a'+i)), "primary-candidate"))
			}
			s["sites"] = sites
		}, "must have at most 16 items"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := minimal("invalid-" + string(rune('a'+i)))
			c.edit(obj["spec"].(map[string]any), obj)
			err := create(t, obj)
			if err == nil {
				t.Fatalf("accepted; want rejection containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rejected with\n  %v\nwant a message containing %q", err, c.want)
			}
		})
	}
}

// backupSpec is a valid spec.backup with one object-store field changed.
func backupSpec(field, value string) map[string]any {
	store := map[string]any{"endpoint": "https://s3.example.com", "bucket": "backups", "credentialsSecret": "s3"}
	store[field] = value
	return map[string]any{"objectStore": store}
}

// TestBackupSpecDefaultedAndMysqlBackupImmutable: a valid spec.backup is
// accepted with its defaults, and a MysqlBackup's spec cannot change.
func TestBackupSpecDefaultedAndMysqlBackupImmutable(t *testing.T) {
	obj := minimal("with-backup")
	b := backupSpec("bucket", "backups")
	b["schedules"] = []any{map[string]any{"name": "nightly", "schedule": "0 3 * * *"}, map[string]any{"name": "hourly", "schedule": "@hourly"}}
	set(obj, "backup", b)
	if err := create(t, obj); err != nil {
		t.Fatalf("valid backup spec rejected: %v", err)
	}
	ctx := context.Background()
	var g v1alpha1.MysqlFailoverGroup
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "with-backup"}, &g); err != nil {
		t.Fatal(err)
	}
	bs := g.Spec.Backup
	if bs == nil || bs.ObjectStore.Region != "us-east-1" || bs.Schedules[0].TimeZone != "Etc/UTC" ||
		bs.RetentionPolicy.MinKeep != 1 || bs.RetentionPolicy.MaxFailedKeep == nil || *bs.RetentionPolicy.MaxFailedKeep != 10 || bs.PITR.Enabled {
		t.Fatalf("defaults: %+v", bs)
	}
	mb := &v1alpha1.MysqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b1"},
		Spec: v1alpha1.MysqlBackupSpec{Group: "with-backup"}}
	if err := cp.Client.Create(ctx, mb); err != nil {
		t.Fatal(err)
	}
	if mb.Spec.Method != v1alpha1.BackupMethodPhysical {
		t.Fatalf("method defaulted to %q", mb.Spec.Method)
	}
	// No schedules at all: backups on request only.
	bare := minimal("backup-no-schedules")
	set(bare, "backup", backupSpec("bucket", "backups"))
	if err := create(t, bare); err != nil {
		t.Fatalf("a backup spec without schedules rejected: %v", err)
	}
	mb.Spec.Site = "pdx"
	if err := cp.Client.Update(ctx, mb); err == nil || !strings.Contains(err.Error(), "a MysqlBackup's spec cannot change") {
		t.Fatalf("changing a MysqlBackup's spec: %v", err)
	}
}

func TestStatusSubresourceAndPrinterColumns(t *testing.T) {
	if err := create(t, minimal("status")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var g v1alpha1.MysqlFailoverGroup
	key := client.ObjectKey{Namespace: "default", Name: "status"}
	if err := cp.Client.Get(ctx, key, &g); err != nil {
		t.Fatal(err)
	}
	g.Status.ActiveSite = "iad"
	g.Status.TopologyGeneration = 1
	g.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonHealthy, LastTransitionTime: metav1.Now()}}
	if err := cp.Client.Status().Update(ctx, &g); err != nil {
		t.Fatalf("status update: %v", err)
	}
	var back v1alpha1.MysqlFailoverGroup
	if err := cp.Client.Get(ctx, key, &back); err != nil {
		t.Fatal(err)
	}
	if back.Status.ActiveSite != "iad" || back.Status.TopologyGeneration != 1 {
		t.Fatalf("status not stored: %+v", back.Status)
	}
}
