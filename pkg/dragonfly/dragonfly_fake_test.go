package dragonfly

// This file is a stand-in for Dragonfly, NOT a real Dragonfly server: none
// is installable on this machine. A go-redis hook answers each command the
// way Dragonfly's documentation says the server does, without any network,
// and records the exact arguments sent. It exists to test the statements
// that only Dragonfly accepts (REPLTAKEOVER); everything both flavors share
// is tested against real Redis 7 in redis_db_test.go.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// fakeDfly is one documented Dragonfly server's state.
type fakeDfly struct {
	mu       sync.Mutex
	name     string
	role     Role
	offset   int64
	fullSync bool // a replica still in full sync refuses REPLTAKEOVER
	master   *fakeDfly
	// catchUp says whether a replica reaches its master's offset within
	// the takeover timeout.
	catchUp bool
	down    bool // shut down after handing over
	sent    [][]string
}

func (f *fakeDfly) hook() redis.Hook { return dflyHook{f} }

type dflyHook struct{ f *fakeDfly }

func (h dflyHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h dflyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook answers without calling next: no connection is ever made.
func (h dflyHook) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		h.f.answer(cmd)
		return cmd.Err()
	}
}

func (f *fakeDfly) answer(cmd redis.Cmder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var args []string
	for _, a := range cmd.Args() {
		args = append(args, fmt.Sprint(a))
	}
	f.sent = append(f.sent, args)
	if f.down {
		cmd.SetErr(errors.New("dial tcp: connection refused"))
		return
	}
	switch strings.ToUpper(args[0]) {
	case "INFO":
		cmd.(*redis.StringCmd).SetVal(f.info(args[1]))
	case "REPLTAKEOVER":
		f.takeover(cmd.(*redis.Cmd), args)
	case "REPLICAOF":
		f.role, f.master = RoleMaster, nil
		cmd.(*redis.Cmd).SetVal("OK")
	case "CLIENT":
		cmd.(*redis.IntCmd).SetVal(3)
	default:
		cmd.SetErr(fmt.Errorf("ERR unknown command '%s'", args[0]))
	}
}

func (f *fakeDfly) info(section string) string {
	if section == "server" {
		return "# Server\r\nredis_version:7.2.0\r\ndragonfly_version:df-v1.25.0\r\n"
	}
	if f.role == RoleMaster {
		return fmt.Sprintf("# Replication\r\nrole:master\r\nmaster_repl_offset:%d\r\n", f.offset)
	}
	sync := "0"
	if f.fullSync {
		sync = "1"
	}
	return fmt.Sprintf("# Replication\r\nrole:replica\r\nmaster_host:%s\r\nmaster_port:6379\r\nmaster_link_status:up\r\n"+
		"master_sync_in_progress:%s\r\nslave_repl_offset:%d\r\n", f.master.name, sync, f.offset)
}

// takeover follows the documented REPLTAKEOVER: a negative timeout is
// refused; on a master it is an idempotent OK; a replica in full sync gets
// "Full sync not done"; otherwise the master stops serving, waits for the
// replica's offset, and on success hands over and shuts down (outside
// cluster mode); when the replica does not catch up in time the master
// resumes and the answer is "Couldn't execute takeover".
func (f *fakeDfly) takeover(cmd *redis.Cmd, args []string) {
	switch {
	case len(args) < 2 || strings.HasPrefix(args[1], "-"):
		cmd.SetErr(errors.New("ERR value is out of range, must be positive"))
	case f.role == RoleMaster:
		cmd.SetVal("OK")
	case f.fullSync:
		cmd.SetErr(errors.New("ERR Full sync not done"))
	case !f.catchUp:
		cmd.SetErr(errors.New("ERR Couldn't execute takeover"))
	default:
		m := f.master
		m.mu.Lock()
		f.offset, m.down = m.offset, true
		m.mu.Unlock()
		f.role, f.master = RoleMaster, nil
		cmd.SetVal("OK")
	}
}

// openFake opens a Node on f through the hook.
func openFake(t *testing.T, f *fakeDfly) *Node {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "192.0.2.1:6379", MaxRetries: -1})
	c.AddHook(f.hook())
	t.Cleanup(func() { _ = c.Close() })
	n, err := Open(context.Background(), c, Endpoint{f.name, 6379})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fakePair() (master, replica *fakeDfly) {
	master = &fakeDfly{name: "df-iad", role: RoleMaster, offset: 900}
	replica = &fakeDfly{name: "df-pdx", role: RoleReplica, offset: 900, master: master, catchUp: true}
	return master, replica
}

// TestDragonflyStandInTakeover: REPLTAKEOVER against the documented
// behaviour of a Dragonfly stand-in (not a real server).
func TestDragonflyStandInTakeover(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(m, r *fakeDfly)
		err       error
		newMaster bool
		oldDown   bool
	}{
		{"success: replica takes over, old master shuts down", func(m, r *fakeDfly) {}, nil, true, true},
		{"replica does not catch up in time", func(m, r *fakeDfly) { r.catchUp = false }, ErrTakeoverFailed, false, false},
		{"full sync not done", func(m, r *fakeDfly) { r.fullSync = true }, ErrNotStableSync, false, false},
		{"already master: idempotent OK", func(m, r *fakeDfly) { r.role = RoleMaster }, nil, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, r := fakePair()
			c.setup(m, r)
			mn, rn := openFake(t, m), openFake(t, r)
			if mn.Flavor() != FlavorDragonfly {
				t.Fatalf("flavor %q", mn.Flavor())
			}
			method, err := Takeover(context.Background(), nil, rn, 30_500_000_000)
			if !errors.Is(err, c.err) || method != MethodReplTakeover {
				t.Fatalf("Takeover = %q, %v; want REPLTAKEOVER, %v", method, err, c.err)
			}
			got, rerr := rn.Replication(context.Background())
			if rerr != nil {
				t.Fatal(rerr)
			}
			if (got.Role == RoleMaster) != c.newMaster {
				t.Fatalf("target role %q, want master=%v", got.Role, c.newMaster)
			}
			_, merr := mn.Replication(context.Background())
			if (merr != nil) != c.oldDown {
				t.Fatalf("old master answers: err=%v, want down=%v", merr, c.oldDown)
			}
		})
	}
}

// TestDragonflyStatements is a protocol test: the exact arguments each verb
// sends to a Dragonfly stand-in.
func TestDragonflyStatements(t *testing.T) {
	ctx := context.Background()
	m, r := fakePair()
	rn := openFake(t, r)
	mn := openFake(t, m)
	if _, err := mn.KillNormalClients(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Takeover(ctx, mn, rn, 30_500_000_000); err != nil { // 30.5 s rounds up
		t.Fatal(err)
	}
	if err := rn.ReplicaOfNoOne(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[*fakeDfly][]string{
		r: {"info server", "repltakeover 31", "replicaof no one"},
		m: {"info server", "client kill type normal"},
	}
	for f, w := range want {
		var got []string
		for _, a := range f.sent {
			got = append(got, strings.ToLower(strings.Join(a, " ")))
		}
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("%s was sent %q, want %q", f.name, got, w)
		}
	}
	if _, err := Takeover(ctx, nil, rn, -1); !errors.Is(err, ErrBadTimeout) {
		t.Fatalf("negative timeout: %v", err)
	}
}
