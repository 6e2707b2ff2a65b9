package mysql

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

func TestMariaDBStatements(t *testing.T) {
	ctx := context.Background()
	set := gtid.MustParseSet("0-1:1-5")
	tests := []struct {
		name  string
		setup func(*recorder)
		verb  func(*instance) error
		want  []string
	}{{
		name:  "fence",
		setup: func(r *recorder) { r.answer(mariadbReadOnlyQuery, []string{"read_only=1"}) },
		verb:  func(in *instance) error { return in.Fence(ctx) },
		want: []string{"SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL read_only = ON",
			processlistQuery, mariadbReadOnlyQuery},
	}, {
		name: "replicate from, by current_pos",
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{Host: "10.0.0.2", Port: 3306}, Credentials{User: "repl", Password: "pw"})
		},
		want: []string{"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL read_only = ON",
			mariadbChangeMaster + " [10.0.0.2 3306 repl pw]", "START REPLICA"},
	}, {
		name: "wait with MASTER_GTID_WAIT on the set's position",
		setup: func(r *recorder) {
			r.answer(mariadbReachedQuery, []string{"gtid_binlog_state=0-1-3", "gtid_slave_pos=0-1-3"})
			r.answer("SHOW REPLICA STATUS", mariadbReplicaRow[:6])
			r.answer(mariadbWaitQuery, []string{"result=0"})
		},
		verb: func(in *instance) error { return in.WaitForGTID(ctx, set, 5*time.Second) },
		want: []string{mariadbReachedQuery, "SHOW REPLICA STATUS", mariadbWaitQuery + " [0-1-5 1]"},
	}, {
		name: "a primary's own writes count as reached",
		setup: func(r *recorder) {
			r.answer(mariadbReachedQuery, []string{"gtid_binlog_state=0-2-2,0-1-5", "gtid_slave_pos=0-2-2"})
		},
		verb: func(in *instance) error { return in.WaitForGTID(ctx, set, 5*time.Second) },
		want: []string{mariadbReachedQuery},
	}, {
		name: "promote",
		setup: func(r *recorder) {
			r.answer("SHOW REPLICA STATUS", mariadbReplicaRow[:6])
			r.answer(mariadbStateQuery, []string{"gtid_binlog_state=0-1-5"})
			r.answer(mariadbReadOnlyQuery, []string{"read_only=0"})
		},
		verb: func(in *instance) error { _, err := in.Promote(ctx, PromoteOptions{}); return err },
		want: []string{idleSent, lockSent, "SHOW REPLICA STATUS", "STOP REPLICA", "SHOW REPLICA STATUS", "RESET REPLICA ALL",
			mariadbStateQuery, "SET GLOBAL read_only = OFF", mariadbReadOnlyQuery, unlockStatement},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			if tc.setup != nil {
				tc.setup(rec)
			}
			if err := tc.verb(recorded(Config{User: "bloodraven"}, mariadbDialect{}, rec)); err != nil {
				t.Fatalf("verb: %v", err)
			}
			if got := rec.sent(); !slices.Equal(got, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestMariaDBErrantUsesBinlogStates(t *testing.T) {
	rec := newRecorder()
	// The replica replicated 0-1-1..2 and then wrote 0-2-3 itself.
	rec.answer(mariadbStateQuery, []string{"gtid_binlog_state=0-1-2,0-2-3"})
	source, _ := gtid.ParseBinlogState("0-1-2")
	errant, err := recorded(Config{}, mariadbDialect{}, rec).ErrantAgainst(context.Background(), source.Set())
	if err != nil || errant.String() != "0-2:3" {
		t.Fatalf("errant %q, %v; want 0-2:3", errant, err)
	}
}

func TestBinlogStateFromSetRoundTrips(t *testing.T) {
	state, _ := gtid.ParseBinlogState("0-1-100,0-2-150,1-3-7")
	back, err := binlogStateFromSet(state.Set())
	if err != nil || back.String() != state.String() {
		t.Fatalf("got %q, %v; want %q", back, err, state)
	}
	if _, err := binlogStateFromSet(gtid.MustParseSet(uuidA + ":1-3")); err == nil {
		t.Fatal("a MySQL set must be refused")
	}
}
