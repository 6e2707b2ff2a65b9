package topology

import (
	"errors"
	"testing"
	"time"
)

// TestCloneDonor: a caught-up replica donates when there is one, the
// writing primary only when there is none, and a diverged, admin-fenced,
// down, stale, broken or lagging site never.
func TestCloneDonor(t *testing.T) {
	primary := wr("a", "A:1-10")
	lagging := func(s SiteView) SiteView {
		return with(s, func(v *SiteView) { v.Replication.Lag = time.Minute })
	}
	tests := []struct {
		name    string
		in      Input
		target  string
		want    Donor
		wantErr error
	}{
		{name: "a caught-up replica rather than the primary",
			in: group("a", primary, ro("b", "A:1-10"), ro("c", "")), target: "c", want: Donor{Site: "b"}},
		{name: "the first caught-up replica in spec order",
			in: group("a", primary, ro("b", "A:1-10"), ro("c", "A:1-10"), ro("d", "")), target: "d", want: Donor{Site: "b"}},
		{name: "a replica a little behind but within maxLag",
			in:     group("a", primary, with(ro("b", "A:1-9"), func(v *SiteView) { v.Replication.Lag = time.Second }), ro("c", "")),
			target: "c", want: Donor{Site: "b"}},
		{name: "a lagging replica is passed over for the next",
			in: group("a", primary, lagging(ro("b", "A:1-5")), ro("c", "A:1-10"), ro("d", "")), target: "d", want: Donor{Site: "c"}},
		{name: "only a lagging replica: the primary",
			in: group("a", primary, lagging(ro("b", "A:1-5")), ro("c", "")), target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a diverged replica never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Diverged = true }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a replica holding transactions the primary lacks never donates",
			in: group("a", primary, ro("b", "A:1-10,B:1"), ro("c", "")), target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "an admin-fenced replica never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.AdminFenced = true }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a down replica never donates",
			in: group("a", primary, down("b"), ro("c", "")), target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "an unknown replica never donates",
			in: group("a", primary, unk("b"), ro("c", "")), target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a replica seen only by an older probe never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Stale = true }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a replica whose replication broke never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Replication.Error = "1236" }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a replica whose replication stopped never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Replication.Running = false }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "a replica that may be writable never donates",
			in:     group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.MaybeWritable = true }), ro("c", "")),
			target: "c", want: Donor{Site: "a", Primary: true}},
		{name: "the target never donates to itself",
			in: group("a", primary, ro("b", "A:1-10")), target: "b", want: Donor{Site: "a", Primary: true}},
		{name: "a diverged target is seeded from a healthy replica",
			in:     group("a", primary, ro("b", "A:1-10"), with(ro("c", "A:1-10,C:1-3"), func(v *SiteView) { v.Diverged = true })),
			target: "c", want: Donor{Site: "b"}},
		{name: "the active site is never cloned over",
			in: group("a", primary, ro("b", "A:1-10")), target: "a", wantErr: ErrCloneActive},
		{name: "an admin-fenced primary and no replica: no donor",
			in: group("a", with(primary, func(v *SiteView) { v.AdminFenced = true }), ro("b", "")), target: "b", wantErr: ErrNoDonor},
		{name: "a down primary: no donor, replicas cannot be known caught up",
			in: group("a", confirmed(down("a")), ro("b", "A:1-10"), ro("c", "")), target: "c", wantErr: ErrNoDonor},
		{name: "a diverged primary flag: no donor",
			in: group("a", with(primary, func(v *SiteView) { v.Diverged = true }), ro("b", "")), target: "b", wantErr: ErrNoDonor},
		{name: "an emergency failover in flight: no donor",
			in: with2(group("a", primary, ro("b", "A:1-10"), ro("c", "")), func(in *Input) {
				in.InFlight = &Intent{From: "a", To: "b", Generation: 4}
			}), target: "c", wantErr: ErrNoDonor},
		{name: "a planned failover in flight: no donor",
			in:     with2(group("a", primary, ro("b", "A:1-10"), ro("c", "")), func(in *Input) { in.PlannedInFlight = true }),
			target: "c", wantErr: ErrNoDonor},
		{name: "no active site recorded: no donor",
			in: group("", primary, ro("b", "A:1-10"), ro("c", "")), target: "c", wantErr: ErrNoDonor},
		{name: "an unknown target",
			in: group("a", primary, ro("b", "A:1-10")), target: "z", wantErr: ErrUnknownSite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CloneDonor(tc.in, tc.target)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %+v, %v; want %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestDonorUnfit: the recorded donor of a reclone, judged again before the
// site's data is replaced.
func TestDonorUnfit(t *testing.T) {
	primary := wr("a", "A:1-10")
	tests := []struct {
		name  string
		in    Input
		donor string
		unfit bool
	}{
		{name: "a caught-up replica", in: group("a", primary, ro("b", "A:1-10"), ro("c", "")), donor: "b"},
		{name: "the writing primary", in: group("a", primary, ro("b", "A:1-10"), ro("c", "")), donor: "a"},
		{name: "the replica went down", in: group("a", primary, down("b"), ro("c", "")), donor: "b", unfit: true},
		{name: "the replica's probe is stale",
			in:    group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Stale = true }), ro("c", "")),
			donor: "b", unfit: true},
		{name: "the replica holds what the primary lacks", in: group("a", primary, ro("b", "A:1-10,B:1"), ro("c", "")),
			donor: "b", unfit: true},
		{name: "the primary stopped writing", in: group("a", ro("a", "A:1-10"), ro("b", "A:1-10"), ro("c", "")),
			donor: "a", unfit: true},
		{name: "a failover in flight", in: inFlight(group("a", primary, ro("b", "A:1-10"), ro("c", "")), "a", "b"),
			donor: "b", unfit: true},
		{name: "the target itself", in: group("a", primary, ro("b", "A:1-10"), ro("c", "")), donor: "c", unfit: true},
		{name: "not a site", in: group("a", primary, ro("b", "A:1-10"), ro("c", "")), donor: "z", unfit: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := DonorUnfit(tc.in, "c", tc.donor)
			if (why != "") != tc.unfit {
				t.Fatalf("DonorUnfit = %q, want unfit %v", why, tc.unfit)
			}
		})
	}
}
