package gtid

import "testing"

func TestCoverAndLacks(t *testing.T) {
	const a = "aaaaaaaa-0000-0000-0000-000000000001"
	cases := []struct {
		name, have, want, lacks string
	}{
		{"mysql intervals are exact", a + ":1-5:8-10", a + ":1-10", a + ":6-7"},
		{"mysql superset lacks nothing", a + ":1-10", a + ":3-9", ""},
		{"mariadb covers every seq up to a server's last", "0-2:1-150,0-1:151-200", "0-1:1-100,0-2:101-150", ""},
		{"mariadb lagging replica after a failback", "0-1:1-100,0-2:101-150", "0-2:1-150,0-1:151-200", "0-1:151-200"},
		{"mariadb isolated primary's tail", "0-1:1-100", "0-1:1-105", "0-1:101-105"},
		{"mariadb another server at a covered seq", "0-1:1-100", "0-1:1-99,0-3:100", "0-3:100"},
		// want is 0-1 1-10, 0-2 11-20, 0-1 21-30; BinlogState.Set names
		// seqs 1-10 after 0-2, which have holds as 0-1's (found by the
		// simulation's MariaDB runs, seed 12).
		{"mariadb seqs have holds under another server's name", "0-1:1-8", "0-2:1-20,0-1:21-30", "0-2:9-20,0-1:21-30"},
		{"mariadb fork below both last seqs", "0-1:1-10,0-3:11-15", "0-2:1-20,0-1:21-30", "0-2:11-20,0-1:21-30"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Lacks(MustParseSet(c.have), MustParseSet(c.want))
			if !got.Equal(MustParseSet(c.lacks)) {
				t.Fatalf("Lacks(%s, %s) = %s, want %s", c.have, c.want, got, c.lacks)
			}
		})
	}
}

func TestOnlyWithoutIntersect(t *testing.T) {
	const a = "aaaaaaaa-0000-0000-0000-000000000001"
	s := MustParseSet(a + ":1-10,0-1:1-5")
	if got := s.Only(a); !got.Equal(MustParseSet(a + ":1-10")) {
		t.Fatalf("Only(uuid) = %s", got)
	}
	if got := s.Only("0-1"); !got.Equal(MustParseSet("0-1:1-5")) {
		t.Fatalf("Only(0-1) = %s", got)
	}
	if got := s.Only(""); !got.IsEmpty() {
		t.Fatalf("Only(\"\") = %s", got)
	}
	if got := s.Without(a); !got.Equal(MustParseSet("0-1:1-5")) {
		t.Fatalf("Without = %s", got)
	}
	if got := s.Intersect(MustParseSet(a + ":5-20")); !got.Equal(MustParseSet(a + ":5-10")) {
		t.Fatalf("Intersect = %s", got)
	}
}
