package grouploop

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// TestDragonflyPromotionsMetric: each result is counted under the group
// and target site, and forgetting the group drops its series.
func TestDragonflyPromotionsMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	n := NewNotifier(nil, m)
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orders"}}
	for _, r := range []string{failover.DragonflyResultSuccess, failover.DragonflyResultSuccess,
		failover.DragonflyResultFailed, failover.DragonflyResultSkipped} {
		n.DragonflyPromoted(g, "pdx", r)
	}
	cases := []struct {
		name   string
		result string
		want   float64
	}{
		{"success counted twice", failover.DragonflyResultSuccess, 2},
		{"failed", failover.DragonflyResultFailed, 1},
		{"skipped", failover.DragonflyResultSkipped, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := testutil.ToFloat64(m.Planned.Dragonfly.WithLabelValues("ns", "orders", "pdx", c.result))
			if got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	m.Planned.forget(prometheus.Labels{labelNamespace: "ns", labelGroup: "orders"})
	if k := testutil.CollectAndCount(m.Planned.Dragonfly); k != 0 {
		t.Fatalf("%d series left after forget", k)
	}
}
