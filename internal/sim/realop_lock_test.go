package sim

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestLockVersion: lockVersion reads the version an optimistic-lock patch
// of a group carries exactly as rendering the patch gives it, and declines
// every other patch, so the fast path decides as the rendered one would.
func TestLockVersion(t *testing.T) {
	group := func(rv string) *v1alpha1.MysqlFailoverGroup {
		return &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "g", ResourceVersion: rv}}
	}
	locked := client.MergeFromWithOptimisticLock{}
	cases := []struct {
		name   string
		patch  client.Patch
		want   string
		wantOK bool
	}{
		{"optimistic lock", client.MergeFromWithOptions(group("41"), locked), "41", true},
		{"no lock", client.MergeFrom(group("41")), "", false},
		{"lock without a version", client.MergeFromWithOptions(group(""), locked), "", false},
		{"another object", client.MergeFromWithOptions(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "41"}}, locked), "", false},
		{"strategic merge", client.StrategicMergeFrom(group("41"), client.MergeFromWithOptimisticLock{}), "", false},
		{"raw", client.RawPatch("application/merge-patch+json", []byte(`{}`)), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := lockVersion(c.patch)
			if got != c.want || ok != c.wantOK {
				t.Fatalf("lockVersion = %q, %v; want %q, %v", got, ok, c.want, c.wantOK)
			}
			if !ok {
				return
			}
			modified := group("99")
			modified.Status.ActiveSite = "b"
			data, err := c.patch.Data(modified)
			if err != nil {
				t.Fatal(err)
			}
			var lock struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(data, &lock); err != nil {
				t.Fatal(err)
			}
			if lock.Metadata.ResourceVersion != got {
				t.Fatalf("the rendered patch carries %q, lockVersion read %q", lock.Metadata.ResourceVersion, got)
			}
		})
	}
}
