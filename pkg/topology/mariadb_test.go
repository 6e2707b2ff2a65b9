package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// maria is the executed set pkg/mysql reads from a MariaDB server's
// @@gtid_binlog_state (BinlogState.Set): which server wrote which seq is
// its guess, by the order of each server's last seq.
func maria(state string) gtid.Set {
	s, err := gtid.ParseBinlogState(state)
	if err != nil {
		panic(err)
	}
	return s.Set()
}

func mariaView(name string, st v1alpha1.SiteState, state string) SiteView {
	v := view(name, st, "")
	v.Executed = maria(state)
	return v
}

// In the MariaDB cases below, domain 0's history is: server 1 wrote seqs
// 1-10, server 2 11-20, server 3 21-30, server 2 31-40, server 1 41-50.
// A replica that lags holds a prefix of it; BinlogState.Set names its
// seqs differently from the full history's (found by the simulation's
// MariaDB runs).

// TestMariaDBLaggingReplicaIsNotDivergent: a replica holding seqs 1-25 of
// the active site's history is healthy, not divergent.
func TestMariaDBLaggingReplicaIsNotDivergent(t *testing.T) {
	a := mariaView("a", v1alpha1.StateWritable, "0-3-30,0-2-40,0-1-50")
	a.ServerID = "0-1"
	in := group("a", a, mariaView("b", v1alpha1.StateReadOnly, "0-1-10,0-2-20,0-3-25"))
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Divergent) > 0 || d.Reason == v1alpha1.ReasonDivergence {
		t.Fatalf("lagging MariaDB replica reported divergent: %s %s %v", d.Reason, d.Message, d.Divergent)
	}
}

// TestMariaDBSelectCandidate: of two replicas holding prefixes of one
// history, the longer is the freshest and is picked; a replica that wrote
// its own seqs past the fork is divergent.
func TestMariaDBSelectCandidate(t *testing.T) {
	cases := []struct {
		name       string
		b, c       string // the two replicas' @@gtid_binlog_state
		site       string
		divergents []string
	}{
		{"prefixes of one history", "0-3-30,0-2-40,0-1-45", "0-1-10,0-2-20,0-3-25", "b", nil},
		{"the shorter first in spec order", "0-1-10,0-2-15", "0-3-30,0-2-40,0-1-41", "c", nil},
		{"equal", "0-1-10,0-2-20", "0-1-10,0-2-20", "b", nil},
		{"c wrote seqs 21-22 itself", "0-1-10,0-2-20,0-3-30", "0-1-10,0-2-20,0-4-22", "", []string{"c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := SelectCandidate([]SiteView{mariaView("b", v1alpha1.StateReadOnly, tc.b),
				mariaView("c", v1alpha1.StateReadOnly, tc.c)})
			var div []string
			for _, d := range got.Divergent {
				div = append(div, d.Site)
			}
			if got.Site != tc.site || len(div) != len(tc.divergents) || (len(div) > 0 && div[0] != tc.divergents[0]) {
				t.Fatalf("SelectCandidate = %q, divergent %v; want %q, %v", got.Site, got.Divergent, tc.site, tc.divergents)
			}
		})
	}
}

// TestMariaDBFollowers: a replica holding a prefix of what the new primary
// was promoted with follows it.
func TestMariaDBFollowers(t *testing.T) {
	in := group("a", mariaView("a", v1alpha1.StateWritable, "0-2-20,0-1-30"),
		mariaView("b", v1alpha1.StateReadOnly, "0-1-10,0-2-15"))
	if got := Followers(in, "a", maria("0-2-20,0-1-30")); len(got) != 1 || got[0] != "b" {
		t.Fatalf("Followers = %v, want [b]", got)
	}
}

// TestMariaDBLostSetNamesShift: an earlier failover lost server 1's seqs
// 120-167. Server 1's site was recloned and, promoted again, wrote seqs
// 154-238 (MariaDB hands out seqs from what a server holds); server 2 was
// promoted next, holding seqs 1-238, and wrote 239 on. A replica holding
// all of it reads as 0-1:1-238,0-2:239-241: BinlogState.Set names seqs
// 120-153, server 2's, after server 1, and a plain intersection with the
// lost set called them discarded (found by the simulation's MariaDB runs,
// seed 712).
func TestMariaDBLostSetNamesShift(t *testing.T) {
	a := mariaView("a", v1alpha1.StateWritable, "0-1-238,0-2-244")
	a.ServerID = "0-2"
	b := mariaView("b", v1alpha1.StateReadOnly, "0-1-238,0-2-241")
	b.ServerID = "0-1"
	in := afterFailover(group("a", a, b), "b", "a", time.Minute)
	in.History = append([]FailoverRecord{{From: "b", To: "a", Generation: 1, Time: t0.Add(-time.Hour),
		Kind: v1alpha1.KindEmergency, Lost: gtid.MustParseSet("0-1:120-167")}}, in.History...)
	in.Promoted = maria("0-2-153,0-1-238")
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errant) > 0 || len(d.Divergent) > 0 {
		t.Fatalf("a replica holding only the history judged errant: %v %v (%s)", d.Errant, d.Divergent, d.Message)
	}
}
