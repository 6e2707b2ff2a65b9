package topology

import (
	"slices"
	"testing"
)

// TestFollowers: after a failover made b writable holding A:1-10, the
// sites to point at b are the read-only ones that are not diverged and hold
// nothing b lacks.
func TestFollowers(t *testing.T) {
	cases := []struct {
		name  string
		sites []SiteView
		want  []string
	}{
		{"read-only replicas behind or equal follow", []SiteView{ro("a", "A:1-8"), wr("b", "A:1-10"), ro("c", "A:1-10")},
			[]string{"a", "c"}},
		{"the target itself never follows", []SiteView{ro("b", "A:1-10")}, nil},
		{"unreachable and unknown sites are left for maintenance", []SiteView{down("a"), wr("b", "A:1-10"), unk("c")}, nil},
		{"a writable site is not repointed", []SiteView{wr("a", "A:1-10"), wr("b", "A:1-10")}, nil},
		{"a diverged site never follows", []SiteView{with(ro("a", "A:1-8"), func(s *SiteView) { s.Diverged = true }),
			wr("b", "A:1-10"), ro("c", "A:1-9")}, []string{"c"}},
		{"a site holding what the target lacks does not follow", []SiteView{ro("a", "A:1-12"), wr("b", "A:1-10"),
			ro("c", "A:1-10,C:1")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := group("b", c.sites...)
			if got := Followers(in, "b", set("A:1-10")); !slices.Equal(got, c.want) {
				t.Fatalf("Followers = %v, want %v", got, c.want)
			}
		})
	}
}
