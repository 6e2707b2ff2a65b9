package failover

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestSettingsForDrainSlowTimeout: spec.failover.drainSlowTimeout bounds
// the wait for a slow applier; unset (a group the API server never
// defaulted) it is 5 minutes.
func TestSettingsForDrainSlowTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *metav1.Duration
		want time.Duration
	}{
		{"unset: the default", nil, 5 * time.Minute},
		{"set", &metav1.Duration{Duration: 90 * time.Second}, 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Spec.Failover.DrainSlowTimeout = tc.spec
			if got := SettingsFor(g, Settings{}).DrainSlowTimeout; got != tc.want {
				t.Fatalf("DrainSlowTimeout %s, want %s", got, tc.want)
			}
		})
	}
}
