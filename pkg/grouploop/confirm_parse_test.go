package grouploop

import (
	"errors"
	"strconv"
	"testing"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestConfirmAuthorityValues: the confirm-authority annotation a person
// sets. A value that is not a usable generation confirms nothing and is an
// ErrBadConfirmation; before, max int64 was accepted and the confirmed
// generation (one above it) wrapped around to math.MinInt64.
func TestConfirmAuthorityValues(t *testing.T) {
	sites := []string{"iad", "pdx"}
	cases := []struct {
		name  string
		value string
		gen   int64
		site  string
		bad   bool
	}{
		{"a generation", "7", 7, "", false},
		{"a generation and a site", "7:pdx", 7, "pdx", false},
		{"the highest confirmable generation", strconv.FormatInt(topology.MaxConfirmGeneration, 10),
			topology.MaxConfirmGeneration, "", false},
		{"one above the highest confirmable generation", strconv.FormatInt(topology.MaxConfirmGeneration+1, 10),
			0, "", true},
		{"max int64", "9223372036854775807", 0, "", true},
		{"max int64 + 1 overflows the parse", "9223372036854775808", 0, "", true},
		{"zero", "0", 0, "", true},
		{"negative", "-3", 0, "", true},
		{"not a number", "seven", 0, "", true},
		{"an unknown site", "7:fra", 0, "", true},
		{"empty", "", 0, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gen, site, err := parseConfirmAuthority(c.value, sites)
			if gen != c.gen || site != c.site || errors.Is(err, ErrBadConfirmation) != c.bad {
				t.Fatalf("got %d %q %v, want %d %q bad=%v", gen, site, err, c.gen, c.site, c.bad)
			}
		})
	}
}
