package topology

import (
	"slices"
	"testing"
	"time"
)

func TestPlanSemiSync(t *testing.T) {
	three := func(pdxAcks, fraAcks bool) []SemiSyncSite {
		return []SemiSyncSite{{Name: "iad", Candidate: true, Acking: false}, {Name: "pdx", Candidate: true, Acking: pdxAcks},
			{Name: "fra", Candidate: false, Acking: fraAcks}}
	}
	on := func(req bool, minN, maxN int, oneAck bool, sites []SemiSyncSite) SemiSyncInput {
		return SemiSyncInput{Enabled: true, Required: req, Timeout: time.Second, MinSyncReplicas: minN, MaxSyncReplicas: maxN,
			OneAck: oneAck, Active: "iad", Sites: sites}
	}
	src := func(timeout time.Duration, n int) SemiSyncRole {
		return SemiSyncRole{Site: "iad", Source: true, Timeout: timeout, WaitCount: n}
	}
	rep := func(site string) SemiSyncRole { return SemiSyncRole{Site: site, Replica: true} }
	off := func(site string) SemiSyncRole { return SemiSyncRole{Site: site} }
	tests := []struct {
		name string
		in   SemiSyncInput
		want []SemiSyncRole
	}{
		{"off: every role off", SemiSyncInput{Active: "iad", Sites: three(true, true)},
			[]SemiSyncRole{off("iad"), off("pdx"), off("fra")}},
		{"no active site: every role off", SemiSyncInput{Enabled: true, Sites: three(true, true)},
			[]SemiSyncRole{off("iad"), off("pdx"), off("fra")}},
		{"preferred, all healthy: the count asked", on(false, 2, 2, false, three(true, true)),
			[]SemiSyncRole{src(time.Second, 2), rep("pdx"), rep("fra")}},
		{"preferred, one replica down: the count follows", on(false, 2, 2, false, three(true, false)),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), rep("fra")}},
		{"preferred, every replica down: never below one", on(false, 2, 2, false, three(false, false)),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), rep("fra")}},
		{"required, one replica down: pinned, waits as long as allowed", on(true, 2, 2, false, three(true, false)),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 2), rep("pdx"), rep("fra")}},
		{"max one: the candidate acknowledges, not the other role", on(false, 1, 1, false, three(false, false)),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), off("fra")}},
		{"one-ack flavor: count one whatever asked, required: only candidates acknowledge", on(true, 2, 2, true, three(true, true)),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), rep("pdx"), off("fra")}},
		{"one-ack flavor, preferred: every site may acknowledge", on(false, 2, 2, true, three(true, true)),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), rep("fra")}},
		{"required, two asked: one slot may go to a site never promoted", on(true, 2, 2, false, three(true, true)),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 2), rep("pdx"), rep("fra")}},
		{"required, one asked: a site never promoted takes no slot, even a free one", on(true, 1, 2, false, three(true, true)),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), rep("pdx"), off("fra")}},
		{"required, the only other candidate down: the site never promoted stays off, commits wait", on(true, 1, 1, false,
			[]SemiSyncSite{{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, Down: true}, {Name: "fra", Acking: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), off("fra")}},
		{"an admin-fenced site acknowledging already does not outrank a healthy one", on(false, 1, 1, false, []SemiSyncSite{
			{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, AdminFenced: true, Acking: true}, {Name: "fra"}}),
			[]SemiSyncRole{src(time.Second, 1), off("pdx"), rep("fra")}},
		{"zero counts mean one", on(false, 0, 0, false, three(true, true)),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), off("fra")}},
		{"the active site moved: it is the source, the old one acknowledges", func() SemiSyncInput {
			in := on(false, 1, 2, false, three(true, true))
			in.Active = "pdx"
			return in
		}(), []SemiSyncRole{rep("iad"), {Site: "pdx", Source: true, Timeout: time.Second, WaitCount: 1}, rep("fra")}},
		{"preferred: a down candidate takes no slot: a healthy site does", on(false, 1, 1, false, []SemiSyncSite{{Name: "iad", Candidate: true},
			{Name: "pdx", Candidate: true, Down: true}, {Name: "fra"}}),
			[]SemiSyncRole{src(time.Second, 1), off("pdx"), rep("fra")}},
		{"every other site down: no slot, required still waits", on(true, 1, 1, false, []SemiSyncSite{{Name: "iad", Candidate: true},
			{Name: "pdx", Candidate: true, Down: true}, {Name: "fra", Down: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), off("fra")}},
		{"a recovered candidate takes the slot from a site never promoted", on(true, 1, 1, false, three(false, true)),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), rep("pdx"), off("fra")}},
		{"an acknowledging candidate keeps its slot when another recovers", on(true, 1, 1, false, []SemiSyncSite{
			{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true}, {Name: "sea", Candidate: true, Acking: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), {Site: "sea", Replica: true}}},
		{"an admin-fenced site acknowledges only when no other can", on(false, 1, 1, false, []SemiSyncSite{{Name: "iad", Candidate: true},
			{Name: "pdx", Candidate: true, AdminFenced: true}, {Name: "fra"}}),
			[]SemiSyncRole{src(time.Second, 1), off("pdx"), rep("fra")}},
		{"preferred: an admin-fenced site still acknowledges, the only one left", on(false, 1, 1, false, []SemiSyncSite{{Name: "iad", Candidate: true},
			{Name: "pdx", Candidate: true, AdminFenced: true}, {Name: "fra", Down: true}}),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), off("fra")}},
		{"required: an admin-fenced site, never promoted, takes no slot", on(true, 1, 1, false, []SemiSyncSite{{Name: "iad", Candidate: true},
			{Name: "pdx", Candidate: true, AdminFenced: true}, {Name: "fra", Down: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), off("fra")}},
		{"a candidate cut off from the primary gives its slot to a connected site", on(true, 1, 1, false, []SemiSyncSite{
			{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, ReceiverDown: true}, {Name: "sea", Candidate: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), {Site: "sea", Replica: true}}},
		{"every receiver failing: no slot, required still waits", on(true, 1, 1, false, []SemiSyncSite{
			{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, ReceiverDown: true}, {Name: "fra", ReceiverDown: true}}),
			[]SemiSyncRole{src(SemiSyncMaxTimeout, 1), off("pdx"), off("fra")}},
		{"preferred: an admin-fenced site acknowledging already acknowledges when no other site can", on(false, 1, 1, false,
			[]SemiSyncSite{{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, AdminFenced: true, Acking: true},
				{Name: "fra", Down: true}}),
			[]SemiSyncRole{src(time.Second, 1), rep("pdx"), off("fra")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanSemiSync(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSemiSyncRoleWith(t *testing.T) {
	sites := []SemiSyncSite{{Name: "iad", Candidate: true}, {Name: "pdx", Candidate: true, Acking: true},
		{Name: "fra", Acking: true}}
	in := func(req bool) SemiSyncInput {
		return SemiSyncInput{Enabled: true, Required: req, Timeout: time.Second, MinSyncReplicas: 2, MaxSyncReplicas: 2,
			Active: "iad", Sites: sites}
	}
	// abc is three candidate sites a, b, c with a active, required, one
	// acknowledgement and one slot (the defaults); dead(x) has x Down.
	abc := func() SemiSyncInput {
		return SemiSyncInput{Enabled: true, Required: true, Active: "a", Sites: []SemiSyncSite{
			{Name: "a", Candidate: true}, {Name: "b", Candidate: true, Acking: true}, {Name: "c", Candidate: true}}}
	}
	dead := func(site string) SemiSyncInput {
		in := abc()
		for i := range in.Sites {
			in.Sites[i].Down = in.Sites[i].Name == site
		}
		return in
	}
	tests := []struct {
		name         string
		in           SemiSyncInput
		active, site string
		want         SemiSyncRole
	}{
		{"off: nothing", SemiSyncInput{Active: "iad", Sites: sites}, "pdx", "pdx", SemiSyncRole{Site: "pdx"}},
		{"re-assert of the active site: its replicas still count", in(false), "iad", "iad",
			SemiSyncRole{Site: "iad", Source: true, Timeout: time.Second, WaitCount: 2}},
		{"new primary, preferred: no replica acknowledges it yet, one asked", in(false), "pdx", "pdx",
			SemiSyncRole{Site: "pdx", Source: true, Timeout: time.Second, WaitCount: 1}},
		{"new primary, required: the count stays pinned", in(true), "pdx", "pdx",
			SemiSyncRole{Site: "pdx", Source: true, Timeout: SemiSyncMaxTimeout, WaitCount: 2}},
		{"the old primary repointed at the new one acknowledges", in(true), "pdx", "iad", SemiSyncRole{Site: "iad", Replica: true}},
		{"a site not in the spec: every part off", in(true), "pdx", "sfo", SemiSyncRole{Site: "sfo"}},
		{"failover a to b with a dead: c acknowledges b", dead("a"), "b", "c", SemiSyncRole{Site: "c", Replica: true}},
		{"failover a to b with a dead: a takes no slot", dead("a"), "b", "a", SemiSyncRole{Site: "a"}},
		{"failover a to b with a dead: b waits for one", dead("a"), "b", "b",
			SemiSyncRole{Site: "b", Source: true, Timeout: SemiSyncMaxTimeout, WaitCount: 1}},
		{"failover a to b, c diverged, a dead: no slot", func() SemiSyncInput {
			in := dead("a")
			in.Sites[2].Down = true
			return in
		}(), "b", "c", SemiSyncRole{Site: "c"}},
		{"planned a to b, a healthy: a acknowledges b before c", abc(), "b", "a", SemiSyncRole{Site: "a", Replica: true}},
		{"failover a to b with a dead: c, failing against a, acknowledges b once repointed", func() SemiSyncInput {
			in := dead("a")
			in.Sites[2].ReceiverDown = true
			return in
		}(), "b", "c", SemiSyncRole{Site: "c", Replica: true}},
		{"re-assert of a: c, failing against a, takes no slot", func() SemiSyncInput {
			in := abc()
			in.Sites[1].Acking, in.Sites[1].ReceiverDown = false, true
			in.Sites[2].ReceiverDown = true
			return in
		}(), "a", "c", SemiSyncRole{Site: "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SemiSyncRoleWith(tc.in, tc.active, tc.site); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if !sites[1].Acking {
		t.Fatal("SemiSyncRoleWith changed its input")
	}
}
