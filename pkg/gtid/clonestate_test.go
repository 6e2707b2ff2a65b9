package gtid

import "testing"

func TestCloneState(t *testing.T) {
	for _, tc := range []struct {
		name, donor, pos, want string
	}{
		{"one server", "0-2:1-90", "0-2-80", "0-2-80"},
		{"the old primary's range is kept", "0-1:1-250,0-2:251-2000", "0-2-2369", "0-1-250,0-2-2369"},
		{"a domain the backup has not is dropped", "0-1:1-10,7-3:1-4", "0-1-10", "0-1-10"},
		{"a server that wrote past the backup is left out", "0-1:1-250,0-2:251-300,0-1:301-400", "0-2-300", "0-2-300"},
		{"two domains", "0-1:1-5,0-2:6-9,1-3:1-7", "0-2-9,1-3-7", "0-1-5,0-2-9,1-3-7"},
		{"empty donor", "", "0-2-5", "0-2-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			donor, err := ParseSet(tc.donor)
			if err != nil {
				t.Fatal(err)
			}
			pos, err := ParsePos(tc.pos)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CloneState(donor, pos)
			if err != nil || got.String() != tc.want {
				t.Fatalf("CloneState = %s, %v; want %s", got, err, tc.want)
			}
			// The clone's derived set holds the donor's history up to pos.
			if st, _ := ParseBinlogState(tc.want); !got.Set().Equal(st.Set()) {
				t.Fatalf("derived %s", got.Set())
			}
		})
	}
	if _, err := CloneState(mustSet(t, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5"), Pos{}); err == nil {
		t.Fatal("a MySQL set accepted")
	}
}

func mustSet(t *testing.T, s string) Set {
	t.Helper()
	set, err := ParseSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
