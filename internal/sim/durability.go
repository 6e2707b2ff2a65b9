package sim

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A power loss (FaultPowerLoss) stops a site's mysqld without a chance to
// flush anything: what it committed is kept only if it reached the disk.
// Whether it did is read from the site's my.cnf as pkg/routing renders it
// for the group's spec.mysql.config: with sync_binlog=1 and
// innodb_flush_log_at_trx_commit=1 in effect every acknowledged commit is
// on disk, and nothing is lost. With either relaxed, MySQL writes the log
// to disk about once a second (innodb_flush_log_at_timeout, 1 s by
// default), so the commits of the last second before the power went are
// lost, though the replicas that streamed them keep their copies. The
// rendered my.cnf forces both settings after the user's (issue 13, path 2),
// so with that fix in place a power loss loses nothing.

// simUserConfig is the sim group's spec.mysql.config: an administrator who
// traded durability for commit latency, as many do.
const simUserConfig = "sync_binlog=0\ninnodb_flush_log_at_trx_commit=2"

// durability is the world's record of what reached each mysqld's disk, and
// of the transactions power losses discarded.
type durability struct {
	// flushed[i] is site i's executed set at the start of the previous
	// step, current[i] at the start of this one: the commits since
	// flushed[i] are the last second's.
	flushed, current []txs
	// lostFrom[k] and lostTo[k]: a power loss discarded transactions
	// lostFrom[k]+1..lostTo[k] of site k's server (lostTo 0: none).
	lostFrom, lostTo []uint64
}

// renderMyCnf is the product's renderer; a test swaps it for one that
// keeps the user's settings.
var renderMyCnf = routing.RenderMyCnf

// durableCommits reports whether the my.cnf rendered for site with the
// user's config makes every commit durable before it is acknowledged.
func durableCommits(flavor v1alpha1.Flavor, site, userConfig string) bool {
	cnf := renderMyCnf(flavor, site, userConfig, v1alpha1.MySQLTLSSpec{})
	return cnfValue(cnf, "sync_binlog") == "1" && cnfValue(cnf, "innodb_flush_log_at_trx_commit") == "1"
}

// cnfValue is the value of option in the [mysqld] sections of cnf as mysqld
// reads it: the last occurrence wins; "" when absent. Dashes and
// underscores are the same in option names.
func cnfValue(cnf, option string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "-", "_") }
	val, inMysqld := "", false
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inMysqld = line == "[mysqld]"
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if inMysqld && ok && norm(k) == option {
			val = strings.TrimSpace(v)
		}
	}
	return val
}

// noteFlushed records, at the start of a step, what each mysqld held.
func (w *World) noteFlushed() {
	d := &w.check.real.dur
	if d.current == nil {
		n := len(w.sites)
		d.flushed, d.current = make([]txs, n), make([]txs, n)
		d.lostFrom, d.lostTo = make([]uint64, n), make([]uint64, n)
	}
	for i, s := range w.sites {
		d.flushed[i], d.current[i] = d.current[i], s.db.executed.clone()
	}
}

// powerLoss stops s's Pod as a power loss does, and drops the commits of
// the last second unless its my.cnf makes them durable.
func (w *World) powerLoss(s *site, until int) {
	if !s.pod {
		return
	}
	s.pod, s.db.up, s.podBackAt, s.goneAt = false, false, until, w.now()
	cfg := ""
	if r, ok := w.op.(*realOperator); ok {
		cfg = r.current().Spec.MySQL.Config
	}
	d := &w.check.real.dur
	if durableCommits(w.cfg.flavor(), s.name, cfg) || d.flushed[s.idx] == nil {
		return
	}
	before := s.db.executed.clone()
	for k := range s.db.executed {
		s.db.executed[k] = min(s.db.executed[k], d.flushed[s.idx][k])
	}
	s.db.received = s.db.executed.clone()
	own := s.idx
	if before[own] > s.db.executed[own] {
		if d.lostTo[own] == 0 || s.db.executed[own] < d.lostFrom[own] {
			d.lostFrom[own] = s.db.executed[own]
		}
		d.lostTo[own] = max(d.lostTo[own], before[own])
	}
	w.logf("%s lost power: executed %v, was %v", s.name, s.db.executed, before)
}

// noteCommit checks a new commit, transaction n of s's server. A number a
// power loss took back names an acknowledged transaction already: handing
// it out again gives one GTID to two transactions. Where no site holds the
// earlier one it is lost silently; where another site holds it, the two
// histories differ under the same GTID with nothing to tell them apart
// (issue 13, path 2: the active site re-asserted without its tail).
func (c *checker) noteCommit(s *site, n uint64) {
	d := &c.real.dur
	k := s.idx
	if d.lostTo == nil || d.lostTo[k] == 0 || n <= d.lostFrom[k] || n > d.lostTo[k] {
		return
	}
	held := "no other site holds it: lost silently"
	var holders []string
	for _, o := range c.w.sites {
		if o != s && o.db.executed[k] >= n {
			holders = append(holders, o.name)
		}
	}
	if len(holders) > 0 {
		held = "the earlier one is held by " + strings.Join(holders, ", ")
	}
	c.violate(InvariantGTIDReuse, fmt.Sprintf("%s commits %s:%d again after a power loss took it back; %s", s.name, s.uuid, n, held))
}

// tailLostBy reports whether all that replica s holds beyond active is the
// tail of active's own transactions a power loss took from active: the
// replica received them before the power went, nothing rejoined.
func (c *checker) tailLostBy(active, s *site) bool {
	d := &c.real.dur
	for k := range s.db.executed {
		if s.db.executed[k] <= active.db.executed[k] {
			continue
		}
		if d.lostTo == nil || k != active.idx || active.db.executed[k] < d.lostFrom[k] || s.db.executed[k] > d.lostTo[k] {
			return false
		}
	}
	return true
}
