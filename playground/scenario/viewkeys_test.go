package scenario

import (
	"crypto/ed25519"
	"maps"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func TestMetricByLabel(t *testing.T) {
	body := `# TYPE bloodraven_sidecar_rejected_views_total counter
bloodraven_sidecar_rejected_views_total{reason="unknown-key"} 3
bloodraven_sidecar_rejected_views_total{reason="older"} 1
bloodraven_sidecar_rejected_views_total{peer="b",reason="older"} 2
bloodraven_sidecar_rejected_views_total_created{reason="older"} 1.7e9
bloodraven_sidecar_rejected_views 9
`
	cases := []struct {
		name, metric string
		want         map[string]float64
	}{
		{"summed by reason", "bloodraven_sidecar_rejected_views_total", map[string]float64{"unknown-key": 3, "older": 3}},
		{"not exported", "bloodraven_rejected_reports_total", map[string]float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := metricByLabel(body, c.metric, "reason"); !maps.Equal(got, c.want) {
				t.Errorf("metricByLabel = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRotationSteps: the three patches follow docs/security.md, and each
// step's condition holds only for a sidecar that finished it.
func TestRotationSteps(t *testing.T) {
	oldPriv, err := protocol.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	old := oldPriv.Public().(ed25519.PublicKey)
	oldID := protocol.KeyID(old)
	steps, newID, err := rotationSteps(old)
	if err != nil || len(steps) != 3 || newID == oldID {
		t.Fatalf("rotationSteps = %d steps, %s, %v", len(steps), newID, err)
	}
	view := func(id string) *v1alpha1.ActiveSiteView { return &v1alpha1.ActiveSiteView{KeyID: id} }
	states := map[string]sidecar.StatusReport{
		"before":           {ViewKeys: []string{oldID}, View: view(oldID)},
		"accepts both":     {ViewKeys: []string{newID, oldID}, View: view(oldID)},
		"signed with new":  {ViewKeys: []string{oldID, newID}, View: view(newID)},
		"only the new key": {ViewKeys: []string{newID}, View: view(newID)},
		"no view":          {ViewKeys: []string{newID}},
	}
	// Which states each step's condition accepts.
	want := [][]string{{"accepts both", "signed with new"}, {"signed with new"}, {"only the new key"}}
	for i, st := range steps {
		for name, rep := range states {
			accepted := st.done(rep) == nil
			expected := false
			for _, w := range want[i] {
				expected = expected || w == name
			}
			if accepted != expected {
				t.Errorf("step %d (%s) on %q: done %v, want %v", i+1, st.name, name, accepted, expected)
			}
		}
	}
}
