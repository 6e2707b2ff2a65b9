package topology

import (
	"math"
	"testing"
)

// TestCheckAuthorityNeverOverflows: a forged or buggy generation, reported
// by a sidecar or typed by a person, must never wrap the generation around.
// Before, a confirmation of max int64 made the generation one above it:
// math.MinInt64, a generation every sidecar ignores and below every other.
func TestCheckAuthorityNeverOverflows(t *testing.T) {
	cases := []struct {
		name    string
		in      AuthorityCheck
		verdict AuthorityVerdict
		gen     int64
	}{
		{"max int64 reported and confirmed: no +1 overflow", AuthorityCheck{Status: 4, Reported: math.MaxInt64,
			Confirm: math.MaxInt64}, AuthorityRegressed, 4},
		{"max int64 confirmed over a small report: refused", AuthorityCheck{Status: 4, Reported: 7,
			Confirm: math.MaxInt64}, AuthorityRegressed, 4},
		{"max int64 reported, nothing confirmed", AuthorityCheck{Status: 4, Reported: math.MaxInt64},
			AuthorityRegressed, 4},
		{"max int64 status, nothing reported above", AuthorityCheck{Status: math.MaxInt64, Reported: 7},
			AuthorityOK, math.MaxInt64},
		{"a negative confirmation counts for nothing", AuthorityCheck{Status: 0, Reported: 3, Confirm: -1},
			AuthorityRegressed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, gen := CheckAuthority(c.in)
			if v != c.verdict || gen != c.gen {
				t.Fatalf("got %s %d, want %s %d", v, gen, c.verdict, c.gen)
			}
			if gen < c.in.Status {
				t.Fatalf("generation %d below status %d", gen, c.in.Status)
			}
		})
	}
}

// TestCheckAuthorityConfirmBound: the highest confirmable generation is
// accepted, one above it is not.
func TestCheckAuthorityConfirmBound(t *testing.T) {
	cases := []struct {
		name    string
		in      AuthorityCheck
		verdict AuthorityVerdict
		gen     int64
	}{
		{"confirmed at MaxConfirmGeneration", AuthorityCheck{Status: 4, Reported: MaxConfirmGeneration,
			Confirm: MaxConfirmGeneration}, AuthorityConfirmed, MaxConfirmGeneration + 1},
		{"MaxConfirmGeneration + 1 is not confirmable", AuthorityCheck{Status: 4, Reported: 7,
			Confirm: MaxConfirmGeneration + 1}, AuthorityRegressed, 4},
		{"a report at MaxGeneration holds the group", AuthorityCheck{Status: 4, Reported: MaxGeneration,
			Confirm: MaxGeneration}, AuthorityRegressed, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, gen := CheckAuthority(c.in)
			if v != c.verdict || gen != c.gen {
				t.Fatalf("got %s %d, want %s %d", v, gen, c.verdict, c.gen)
			}
			if gen > MaxGeneration {
				t.Fatalf("generation %d above MaxGeneration", gen)
			}
		})
	}
}
