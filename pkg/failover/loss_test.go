package failover

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

func TestAccountLoss(t *testing.T) {
	last := func() *v1alpha1.FailoverRecord {
		return &v1alpha1.FailoverRecord{Time: metav1.NewTime(t0), From: "a", To: "b", Kind: v1alpha1.KindEmergency}
	}
	cases := []struct {
		name     string
		st       v1alpha1.MysqlFailoverGroupStatus
		from     string
		ok       bool
		lost     int64
		lostGTID string
	}{
		{"old primary had transactions the target never got",
			v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-8"},
			uuidA + ":1-10", true, 2, uuidA + ":9-10"},
		{"nothing lost",
			v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-10"},
			uuidA + ":1-10", true, 0, ""},
		// The old primary, repointed at the new one before it was read,
		// holds the new primary's writes since: none is lost (found by the
		// simulation with the real operator, seed 2067).
		{"new primary's own writes do not count",
			v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-10",
				Sites: []v1alpha1.SiteStatus{{Name: "a", ServerID: uuidA}, {Name: "b", ServerID: uuidB}}},
			uuidA + ":1-12," + uuidB + ":1-3", true, 2, uuidA + ":11-12"},
		{"already accounted", func() v1alpha1.MysqlFailoverGroupStatus {
			st := v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-8"}
			n := int64(0)
			st.LastFailover.TransactionsLost = &n
			return st
		}(), uuidA + ":1-10", false, 0, ""},
		// What a candidate received and could not apply was counted at the
		// failover's end (RecordReceivedLoss); the old primary's read adds
		// its own loss to it, once.
		{"received loss counted early: the old primary's read adds to it", func() v1alpha1.MysqlFailoverGroupStatus {
			st := v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-8"}
			RecordReceivedLoss(&st, gtid.MustParseSet(uuidB+":5"))
			return st
		}(), uuidA + ":1-10", true, 3, uuidA + ":9-10," + uuidB + ":5"},
		{"received loss and the old primary's both accounted", func() v1alpha1.MysqlFailoverGroupStatus {
			st := v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-8"}
			RecordReceivedLoss(&st, gtid.MustParseSet(uuidA+":9-10"))
			AccountLoss(&st, gtid.MustParseSet(uuidA+":1-10"))
			return st
		}(), uuidA + ":1-10", false, 0, ""},
		{"no failover yet", v1alpha1.MysqlFailoverGroupStatus{}, uuidA + ":1-10", false, 0, ""},
		// An emergency failover retargeted to the old primary itself: it
		// kept every transaction it had, and its writes since are its
		// own, not lost (found by the simulation with the real operator).
		{"a failover back to the old primary loses nothing", func() v1alpha1.MysqlFailoverGroupStatus {
			lf := last()
			lf.To = lf.From
			return v1alpha1.MysqlFailoverGroupStatus{LastFailover: lf, PromotionGtidExecuted: uuidA + ":1-8"}
		}(), uuidA + ":1-60", true, 0, ""},
		// The old primary was never writable (a planned target named
		// active, then an emergency failover away from it) and kept
		// replicating from the new primary: what it holds of the new
		// primary's server past the promotion was written since, not
		// lost (found by the simulation with the real operator, seed 124).
		{"the new primary's writes since, replicated back to the old primary, are not lost", func() v1alpha1.MysqlFailoverGroupStatus {
			return v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: uuidA + ":1-10," + uuidB + ":1-60",
				Sites: []v1alpha1.SiteStatus{{Name: "b", ServerID: uuidB}}}
		}(), uuidA + ":1-12," + uuidB + ":1-63", true, 2, uuidA + ":11-12"},
		// MariaDB: the old primary wrote seqs 1-10, another server 11-20,
		// the old primary 21-30; its @@gtid_binlog_state read as a Set
		// names seqs 1-10 after the other server. The target held seqs
		// 1-8: 22 are lost, not 30 (found by the simulation's MariaDB
		// runs, seed 12).
		{"mariadb: seqs the target held under another server's name are not lost",
			v1alpha1.MysqlFailoverGroupStatus{LastFailover: last(), PromotionGtidExecuted: "0-1:1-8"},
			"0-2:1-20,0-1:21-30", true, 22, "0-1:21-30,0-2:9-20"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok := AccountLoss(&c.st, gtid.MustParseSet(c.from))
			if ok != c.ok {
				t.Fatalf("AccountLoss = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if lf := c.st.LastFailover; *lf.TransactionsLost != c.lost || lf.LostGtidSet != c.lostGTID {
				t.Fatalf("lost %d %q, want %d %q", *lf.TransactionsLost, lf.LostGtidSet, c.lost, c.lostGTID)
			}
		})
	}
}

// TestLossPendingFromNamesOnlyAnUnreadOldPrimary: the old primary's data is
// kept from a reclone only while its own part of the loss is unread; an
// abandoned target still to be read is its own entry, not the old
// primary's.
func TestLossPendingFromNamesOnlyAnUnreadOldPrimary(t *testing.T) {
	lost := int64(2)
	cases := []struct {
		name string
		lf   v1alpha1.FailoverRecord
		want string
	}{
		{"old primary unread", v1alpha1.FailoverRecord{From: "a", To: "b"}, "a"},
		{"old primary read, received loss pending it", v1alpha1.FailoverRecord{From: "a", To: "b",
			TransactionsLost: &lost, SourceLossPending: true}, "a"},
		{"old primary read, an abandoned target unread", v1alpha1.FailoverRecord{From: "a", To: "b",
			TransactionsLost: &lost, AbandonedLossPending: []string{"c"}}, ""},
		{"all read", v1alpha1.FailoverRecord{From: "a", To: "b", TransactionsLost: &lost}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &v1alpha1.MysqlFailoverGroupStatus{LastFailover: &c.lf}
			if got := LossPendingFrom(st); got != c.want {
				t.Fatalf("LossPendingFrom = %q, want %q", got, c.want)
			}
		})
	}
}
