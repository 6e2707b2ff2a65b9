package gtid

import "testing"

func TestReceivedUnapplied(t *testing.T) {
	const a = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, tc := range []struct {
		name, executed, received, want string
	}{
		{"MySQL: exact", a + ":1-7", a + ":1-10", a + ":8-10"},
		{"MySQL: all applied", a + ":1-10", a + ":1-10", ""},
		{"MariaDB: a position stands for the seqs up to it", "0-1:1-2", "0-1:5", "0-1:3-5"},
		{"MariaDB: applied", "0-1:1-5", "0-1:5", ""},
		{"MariaDB: the executed seqs of another server count", "0-1:1-2,0-2:3-4", "0-2:6", "0-2:5-6"},
		{"MariaDB: one domain behind, another applied", "0-1:1-4,1-1:1-9", "0-1:6,1-1:9", "0-1:5-6"},
		{"nothing received", a + ":1-3", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReceivedUnapplied(MustParseSet(tc.executed), MustParseSet(tc.received))
			if want := MustParseSet(tc.want); !got.Equal(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}
