package plugin

import "testing"

func TestEditEntries(t *testing.T) {
	for _, tc := range []struct {
		value, site   string
		add, remove   string
		added, remved bool
	}{
		{"", "pdx", "pdx", "", true, false},
		{"iad", "pdx", "iad,pdx", "iad", true, false},
		{"iad,pdx", "pdx", "iad,pdx", "iad", false, true},
		{"pdx,iad,pdx", "pdx", "pdx,iad,pdx", "iad", false, true},
		{"iad,,", "pdx", "iad,pdx", "iad,,", true, false},
		{"pdx", "pdx", "pdx", "", false, true},
	} {
		if got, ok := addEntry(tc.value, tc.site); got != tc.add || ok != tc.added {
			t.Errorf("addEntry(%q, %q) = %q, %v; want %q, %v", tc.value, tc.site, got, ok, tc.add, tc.added)
		}
		if got, ok := removeEntry(tc.value, tc.site); got != tc.remove || ok != tc.remved {
			t.Errorf("removeEntry(%q, %q) = %q, %v; want %q, %v", tc.value, tc.site, got, ok, tc.remove, tc.remved)
		}
	}
}
