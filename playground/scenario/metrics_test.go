package scenario

import "testing"

func TestSumMetric(t *testing.T) {
	body := `# HELP bloodraven_rejected_reports_total Reports refused.
# TYPE bloodraven_rejected_reports_total counter
bloodraven_rejected_reports_total{reason="no-client-cert"} 3
bloodraven_rejected_reports_total{reason="wrong-site"} 2
bloodraven_rejected_reports_total_created 1.7e9
bloodraven_other 9
plain_total 4
`
	cases := []struct {
		name  string
		want  float64
		found bool
	}{
		{"bloodraven_rejected_reports_total", 5, true},
		{"plain_total", 4, true},
		{"bloodraven_sidecar_rejected_views_total", 0, false},
		{"bloodraven_rejected", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, found := sumMetric(body, c.name)
			if got != c.want || found != c.found {
				t.Errorf("sumMetric(%s) = %g, %v; want %g, %v", c.name, got, found, c.want, c.found)
			}
		})
	}
}
