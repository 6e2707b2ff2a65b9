package topology

import (
	"slices"
	"testing"
)

func TestPlanCacheFollow(t *testing.T) {
	master := func(s string) CacheSiteRead { return CacheSiteRead{Site: s, Read: true, Master: true} }
	replica := func(s, of string) CacheSiteRead { return CacheSiteRead{Site: s, Read: true, MasterSite: of} }
	down := func(s string) CacheSiteRead { return CacheSiteRead{Site: s} }
	cases := []struct {
		name   string
		active string
		reads  []CacheSiteRead
		want   CacheFollowPlan
	}{
		{"settled: nothing but the label", "a", []CacheSiteRead{master("a"), replica("b", "a"), replica("c", "a")},
			CacheFollowPlan{Traffic: "a"}},
		{"old master restarted empty as a master: repointed", "b", []CacheSiteRead{master("a"), master("b")},
			CacheFollowPlan{Traffic: "b", Repoint: []string{"a"}}},
		{"replica of the old site: repointed", "b", []CacheSiteRead{replica("a", "b"), master("b"), replica("c", "a")},
			CacheFollowPlan{Traffic: "b", Repoint: []string{"c"}}},
		{"replica of no known site: repointed", "a", []CacheSiteRead{master("a"), replica("b", "")},
			CacheFollowPlan{Traffic: "a", Repoint: []string{"b"}}},
		{"unanswering replica left alone", "a", []CacheSiteRead{master("a"), down("b")}, CacheFollowPlan{Traffic: "a"}},
		{"active cache still a replica (after an emergency): promote first", "b", []CacheSiteRead{master("a"), replica("b", "a")},
			CacheFollowPlan{Promote: true, PromoteFrom: "a"}},
		{"active cache replica of no known site: promote without a source", "b", []CacheSiteRead{down("a"), replica("b", "")},
			CacheFollowPlan{Promote: true}},
		{"active cache down: nothing", "b", []CacheSiteRead{master("a"), down("b")}, CacheFollowPlan{}},
		{"no active site: nothing", "", []CacheSiteRead{master("a"), replica("b", "a")}, CacheFollowPlan{}},
		{"active site not read at all: nothing", "c", []CacheSiteRead{master("a")}, CacheFollowPlan{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PlanCacheFollow(c.active, c.reads)
			if got.Promote != c.want.Promote || got.PromoteFrom != c.want.PromoteFrom || got.Traffic != c.want.Traffic || !slices.Equal(got.Repoint, c.want.Repoint) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
