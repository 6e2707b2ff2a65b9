//go:build envtest

package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/backup"
	"github.com/shipstream/bloodraven/pkg/objstore"
	"github.com/shipstream/bloodraven/pkg/plugin"
)

// TestBackupsListsTheStore: `backups` reads the group's object store with
// the credentials Secret it names, and lists a base backup with its size
// and what it can be restored to, and an unreadable manifest as refused.
// A group without spec.backup is told so.
func TestBackupsListsTheStore(t *testing.T) {
	ctx := context.Background()
	if err := plugin.Backups(ctx, cp.Client, newGroup(t), "orders", &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "no spec.backup") {
		t.Fatalf("a group without backups: %v", err)
	}
	gw := testbed.StartObjectStore(t)
	ns := fmt.Sprintf("plugin-bk-%d-%d", os.Getpid()%1000, nsCounter.Add(1))
	if err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3"},
		Data: map[string][]byte{"accessKeyId": []byte(gw.AccessKey), "secretAccessKey": []byte(gw.SecretKey)}}); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": "orders", "namespace": ns},
		"spec": map[string]any{
			"sites": []any{map[string]any{"name": "iad", "zone": "iad"}, map[string]any{"name": "pdx", "zone": "pdx"}},
			"backup": map[string]any{"objectStore": map[string]any{"endpoint": gw.Endpoint, "bucket": "backups",
				"prefix": "prod", "pathStyle": true, "credentialsSecret": "s3"}}}}}
	if err := cp.Client.Create(ctx, u); err != nil {
		t.Fatalf("create group: %v", err)
	}
	store, err := objstore.New(objstore.Config{Endpoint: gw.Endpoint, Bucket: "backups", Prefix: "prod", PathStyle: true,
		AccessKey: gw.AccessKey, SecretKey: gw.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	m := backup.Manifest{Version: backup.ManifestVersion, ID: "nightly-1", Namespace: ns, Group: "orders", Site: "pdx",
		Method: "mariadb-backup", StartTime: end.Add(-time.Minute), StopTime: end, ConsistentTime: end,
		GTIDPosition: "0-1-500", Data: ns + "/orders/base/nightly-1/data-0123456789abcdef.xbstream.zst",
		Compression: "zstd", Size: 3 << 20, SHA256: strings.Repeat("ab", 32)}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for key, b := range map[string][]byte{ns + "/orders/base/nightly-1/manifest.json": body,
		ns + "/orders/base/broken/manifest.json": []byte("{")} {
		if _, err := store.Put(ctx, key, bytes.NewReader(b), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := plugin.Backups(ctx, cp.Client, ns, "orders", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nightly-1", "pdx", "3.0 MiB", "0-1-500", "no archived binlog carries it on",
		"refused:", "/orders/base/broken/manifest.json"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
