package sim

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// MariaDB runs (Config.MariaDB). The group's flavor is MariaDB and every
// mysqld answers the operator as MariaDB does. The world's ground truth
// stays txs (transaction n of site k's server, for every k and n); what
// changes is only what the operator reads:
//
//   - each site's server has the server_id pkg/routing renders into its
//     my.cnf, and writes in the one domain, 0, that the my.cnf sets;
//   - a commit's GTID is 0-<server_id>-<seq>, seq one above the highest
//     seq the server holds in the domain (so a new primary continues the
//     sequence from what it received, as MariaDB does);
//   - @@gtid_binlog_state is each server's last GTID the site holds, and
//     Status.Executed what pkg/mysql's MariaDB flavor makes of it
//     (gtid.BinlogState.Set), not the exact set;
//   - @@gtid_slave_pos is the last GTID the SQL thread applied (a site's
//     own writes and RESET REPLICA ALL leave it), Gtid_IO_Pos the last the
//     IO thread received;
//   - WaitForGTID, Promote and ErrantAgainst answer by the flavor's rules
//     (gtid.PosFromSet and its reached check, BinlogState.Set,
//     gtid.BinlogErrant).

// mariaPos is what a MariaDB replica keeps besides its binlog: the last
// GTID its SQL thread applied (@@gtid_slave_pos, one domain) and the last
// its IO thread received (Gtid_IO_Pos); Seq 0 for none.
type mariaPos struct {
	slave, io gtid.GTID
}

// mariaDBRun reports whether the seed's run is a MariaDB group: one run in
// three, drawn from a generator of its own so that every other choice of
// the seed stays as it was.
func mariaDBRun(seed uint64) bool { return rand.New(rand.NewPCG(seed, 0x3adb)).IntN(3) == 0 }

// flavor is the run's database flavor.
func (c Config) flavor() v1alpha1.Flavor {
	if c.MariaDB {
		return v1alpha1.FlavorMariaDB
	}
	return v1alpha1.FlavorMySQL
}

// serverID is site k's server_id, as its rendered my.cnf sets it.
func (w *World) serverID(k int) uint32 { return routing.ServerID(w.sites[k].name) }

// assignSeq gives transaction n of s's server, committed now, its MariaDB
// seq: one above the highest s holds. Called before s holds it.
func (w *World) assignSeq(s *site, n uint64) {
	if !w.cfg.MariaDB {
		return
	}
	if w.seqAt == nil {
		w.seqAt = make([][]uint64, len(w.sites))
	}
	seq := w.lastSeq(s.db.executed) + 1
	if at := w.seqAt[s.idx]; uint64(len(at)) >= n {
		at[n-1] = seq // a number handed out again (reclone, power loss)
	} else {
		w.seqAt[s.idx] = append(at, seq)
	}
}

// gtidOf is the MariaDB GTID of transaction n of site k's server.
func (w *World) gtidOf(k int, n uint64) gtid.GTID {
	return gtid.GTID{Domain: 0, Server: w.serverID(k), Seq: w.seqAt[k][n-1]}
}

// lastSeq is the highest seq among the transactions of t.
func (w *World) lastSeq(t txs) uint64 {
	var last uint64
	for k, n := range t {
		if n > 0 {
			last = max(last, w.seqAt[k][n-1])
		}
	}
	return last
}

// binlogState is @@gtid_binlog_state of a server that holds t: the last
// GTID of every server, in canonical order.
func (w *World) binlogState(t txs) gtid.BinlogState {
	var out gtid.BinlogState
	for k, n := range t {
		if n > 0 {
			out = append(out, w.gtidOf(k, n))
		}
	}
	slices.SortFunc(out, func(a, b gtid.GTID) int {
		if a.Seq != b.Seq {
			return compareUint(a.Seq, b.Seq)
		}
		return compareUint(uint64(a.Server), uint64(b.Server))
	})
	return out
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// noteApplied records in db's slave position that its SQL thread applied
// transaction db.executed[k] of site k's server.
func (w *World) noteApplied(db *mysqld, k int) {
	if w.cfg.MariaDB {
		db.maria.slave = w.gtidOf(k, db.executed[k])
	}
}

// noteReceived records in s's IO position the last GTID its IO thread
// received from src, when it received anything new.
func (w *World) noteReceived(s, src *site, before txs) {
	if !w.cfg.MariaDB || before.contains(s.db.received) {
		return
	}
	if pos := w.binlogState(src.db.executed).Pos(); len(pos) > 0 {
		s.db.maria.io = pos[0]
	}
}

// noteRecloned sets a recloned server's slave position to its copy's, as
// an administrator restoring a backup does.
func (w *World) noteRecloned(s *site) {
	if !w.cfg.MariaDB {
		return
	}
	if pos := w.binlogState(s.db.executed).Pos(); len(pos) > 0 {
		s.db.maria.slave = pos[0]
	}
}

// posString prints a one-domain position, "" for none.
func posString(g gtid.GTID) string {
	if g.Seq == 0 {
		return ""
	}
	return g.String()
}

// mariaStatus fills st as pkg/mysql's MariaDB flavor reads it: the GTID
// variables, and Executed derived from @@gtid_binlog_state.
func (w *World) mariaStatus(s *site, st *mysql.Status) {
	state := w.binlogState(s.db.executed)
	pos := state.Pos()
	st.Flavor, st.ServerID, st.ServerUUID, st.SuperReadOnly = v1alpha1.FlavorMariaDB, w.serverID(s.idx), "", false
	st.GTIDBinlogState, st.GTIDBinlogPos, st.Executed = state.String(), pos.String(), state.Set()
	st.GTIDSlavePos = posString(s.db.maria.slave)
	// gtid_current_pos: the binlog's GTID where this server wrote it with a
	// seq above the slave position, else the slave position.
	st.GTIDCurrentPos = st.GTIDSlavePos
	if len(pos) > 0 && pos[0].Server == st.ServerID && pos[0].Seq > s.db.maria.slave.Seq {
		st.GTIDCurrentPos = pos[0].String()
	}
	st.GTIDExecuted = ""
}

// mariaReached is pkg/mysql's MariaDB wait check for target (a position
// gtid.PosFromSet made): per domain, the slave position at or past the
// target's seq (as MASTER_GTID_WAIT judges, whatever the server), or the
// binlog state holding the target's own server at or past it.
func (w *World) mariaReached(s *site, target gtid.Pos) bool {
	state := w.binlogState(s.db.executed)
	slave := gtid.Pos{}
	if s.db.maria.slave.Seq > 0 {
		slave = gtid.Pos{s.db.maria.slave}
	}
	for _, t := range target {
		if g, ok := slave.Domain(t.Domain); ok && g.Seq >= t.Seq {
			continue
		}
		if !slices.ContainsFunc(state, func(g gtid.GTID) bool {
			return g.Domain == t.Domain && g.Server == t.Server && g.Seq >= t.Seq
		}) {
			return false
		}
	}
	return true
}

// stateFromSet is pkg/mysql's binlogStateFromSet: the last seq of every
// source id of s, which inverts BinlogState.Set.
func stateFromSet(s gtid.Set) (gtid.BinlogState, error) {
	var text []string
	for _, src := range s.Sources() {
		ivs := s.Intervals(src)
		text = append(text, src+"-"+strconv.FormatUint(ivs[len(ivs)-1].End, 10))
	}
	return gtid.ParseBinlogState(strings.Join(text, ","))
}
