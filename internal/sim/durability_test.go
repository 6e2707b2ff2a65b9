package sim

import (
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestCnfValue(t *testing.T) {
	cnf := "[client]\nsync_binlog=7\n[mysqld]\nsync-binlog = 0\n[mysqld_safe]\nsync_binlog=5\n[mysqld]\nsync_binlog=1\n"
	cases := []struct{ name, option, want string }{
		{"the last [mysqld] occurrence wins, dashes read as underscores", "sync_binlog", "1"},
		{"absent", "innodb_flush_log_at_trx_commit", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cnfValue(cnf, c.option); got != c.want {
				t.Errorf("cnfValue(%s) = %q, want %q", c.option, got, c.want)
			}
		})
	}
}

// TestRenderedMyCnfIsDurable: the product's my.cnf forces durable commits
// over the sim group's relaxed spec.mysql.config, so a power loss loses
// nothing; a renderer that kept the user's settings would not.
func TestRenderedMyCnfIsDurable(t *testing.T) {
	if !durableCommits(v1alpha1.FlavorMySQL, "iad", simUserConfig) {
		t.Fatal("the rendered my.cnf leaves commits not durable")
	}
	keepUser := func(_ v1alpha1.Flavor, _, user string, _ v1alpha1.MySQLTLSSpec) string { return "[mysqld]\n" + user }
	defer func(r func(v1alpha1.Flavor, string, string, v1alpha1.MySQLTLSSpec) string) { renderMyCnf = r }(renderMyCnf)
	renderMyCnf = keepUser
	if durableCommits(v1alpha1.FlavorMySQL, "iad", simUserConfig) {
		t.Fatal("sync_binlog=0 read as durable")
	}
}

// powerLossWorld is a real-operator world whose site 0 is writable and has
// committed 3 transactions before the last step and 2 in it, all streamed
// to site 1.
func powerLossWorld(t *testing.T) (*World, *site, *site) {
	t.Helper()
	cfg := ConfigForSeed(1, 100)
	w := newWorld(cfg, nil)
	a, b := w.sites[0], w.sites[1]
	a.db.readOnly = false
	for range 3 {
		w.commit(a)
	}
	w.noteFlushed()
	w.noteFlushed()
	for range 2 {
		w.commit(a)
	}
	b.db.executed[a.idx], b.db.received[a.idx] = 5, 5
	return w, a, b
}

func TestPowerLoss(t *testing.T) {
	t.Run("durable: nothing lost", func(t *testing.T) {
		w, a, _ := powerLossWorld(t)
		w.powerLoss(a, 10)
		if a.pod || a.db.up || a.db.executed[a.idx] != 5 {
			t.Fatalf("after the power loss: pod %v up %v executed %v", a.pod, a.db.up, a.db.executed)
		}
	})
	t.Run("not durable: the last second lost, a reuse seen", func(t *testing.T) {
		defer func(r func(v1alpha1.Flavor, string, string, v1alpha1.MySQLTLSSpec) string) { renderMyCnf = r }(renderMyCnf)
		renderMyCnf = func(_ v1alpha1.Flavor, _, user string, _ v1alpha1.MySQLTLSSpec) string { return "[mysqld]\n" + user }
		w, a, b := powerLossWorld(t)
		w.powerLoss(a, 10)
		if a.db.executed[a.idx] != 3 {
			t.Fatalf("executed %v, want the 3 flushed", a.db.executed)
		}
		if !w.check.tailLostBy(a, b) {
			t.Error("b's copy of the lost tail counted as a rejoin")
		}
		w.boot(a)
		a.pod, a.db.readOnly = true, false
		w.commit(a)
		if len(w.check.violations) != 1 || w.check.violations[0].Invariant != InvariantGTIDReuse ||
			!strings.Contains(w.check.violations[0].Detail, "iad commits") || !strings.Contains(w.check.violations[0].Detail, "held by pdx") {
			t.Fatalf("violations %v, want one %s naming pdx", w.check.violations, InvariantGTIDReuse)
		}
	})
}
