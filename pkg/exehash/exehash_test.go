package exehash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileAndSelf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := File(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("File = %s, want %s", got, want)
	}
	self, err := Self()
	if err != nil || !Valid(self) {
		t.Fatalf("Self = %q, %v", self, err)
	}
}

func TestValid(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want bool
	}{
		"hash":      {strings.Repeat("0a", 32), true},
		"short":     {strings.Repeat("0a", 31), false},
		"long":      {strings.Repeat("0a", 33), false},
		"uppercase": {strings.Repeat("0A", 32), false},
		"not hex":   {strings.Repeat("0g", 32), false},
		"empty":     {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Valid(tc.in); got != tc.want {
				t.Fatalf("Valid(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
