package topology

import "testing"

// TestSelectCandidateSemiSync: an acknowledging semi-sync replica only
// breaks a tie between equally fresh candidates; freshness comes first,
// because the freshest replica already holds every acknowledged write.
func TestSelectCandidateSemiSync(t *testing.T) {
	acking := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.Replication.SemiSyncAcking = true }) }
	tests := []struct {
		name  string
		sites []SiteView
		want  string
	}{
		{"equal sets: the acknowledging replica beats spec order",
			[]SiteView{ro("b", "A:1-10"), acking(ro("c", "A:1-10"))}, "c"},
		{"equal sets, both acknowledging: spec order",
			[]SiteView{acking(ro("b", "A:1-10")), acking(ro("c", "A:1-10"))}, "b"},
		{"equal sets, none acknowledging: spec order",
			[]SiteView{ro("b", "A:1-10"), ro("c", "A:1-10")}, "b"},
		{"fresher beats acknowledging: nothing it holds is lost",
			[]SiteView{acking(ro("b", "A:1-9")), ro("c", "A:1-10")}, "c"},
		{"fresher and acknowledging",
			[]SiteView{ro("b", "A:1-9"), acking(ro("c", "A:1-10"))}, "c"},
		{"an acknowledging site that is not eligible is not picked",
			[]SiteView{ro("b", "A:1-10"), with(acking(ro("c", "A:1-10")), func(v *SiteView) { v.AdminFenced = true })}, "b"},
		{"among three, the tie is broken between the freshest only",
			[]SiteView{acking(ro("b", "A:1-8")), ro("c", "A:1-10"), acking(ro("d", "A:1-10"))}, "d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if c := SelectCandidate(tc.sites); c.Site != tc.want {
				t.Fatalf("picked %q (%+v), want %q", c.Site, c, tc.want)
			}
		})
	}
}
