package topology

import "testing"

func TestCheckAuthority(t *testing.T) {
	cases := []struct {
		name    string
		in      AuthorityCheck
		verdict AuthorityVerdict
		gen     int64
	}{
		{"sidecars behind or equal: trust status", AuthorityCheck{Status: 7, Reported: 7}, AuthorityOK, 7},
		{"no sidecar reported yet", AuthorityCheck{Status: 3}, AuthorityOK, 3},
		{"emptied status, sidecars hold 7: regressed", AuthorityCheck{Status: 0, Reported: 7}, AuthorityRegressed, 0},
		{"restored status behind the sidecars: regressed", AuthorityCheck{Status: 4, Reported: 7}, AuthorityRegressed, 4},
		{"a confirmation below the reports does not count", AuthorityCheck{Status: 4, Reported: 7, Confirm: 6},
			AuthorityRegressed, 4},
		{"confirmed at the highest report: one above", AuthorityCheck{Status: 4, Reported: 7, Confirm: 7},
			AuthorityConfirmed, 8},
		{"confirmed above the reports: one above the confirmation", AuthorityCheck{Status: 0, Reported: 7, Confirm: 20},
			AuthorityConfirmed, 21},
		{"a stale confirmation changes nothing", AuthorityCheck{Status: 9, Reported: 9, Confirm: 3}, AuthorityOK, 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, gen := CheckAuthority(c.in)
			if v != c.verdict || gen != c.gen {
				t.Fatalf("got %s %d, want %s %d", v, gen, c.verdict, c.gen)
			}
			if v != AuthorityRegressed && gen < c.in.Reported {
				t.Fatalf("generation %d below a reported %d", gen, c.in.Reported)
			}
		})
	}
}
