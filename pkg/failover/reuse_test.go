package failover

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

func TestAccountLossReusedNames(t *testing.T) {
	st := &v1alpha1.MysqlFailoverGroupStatus{
		LastFailover:          &v1alpha1.FailoverRecord{From: "x", To: "r"},
		PromotionGtidExecuted: "0-1:1-167",
	}
	bs, _ := gtid.ParseBinlogState("0-2-153,0-1-160")
	AccountLoss(st, bs.Set())
	t.Logf("lost %d %q", *st.LastFailover.TransactionsLost, st.LastFailover.LostGtidSet)
	if *st.LastFailover.TransactionsLost == 0 {
		t.Errorf("x's 0-2-120..153 and 0-1-154..160 (41 acknowledged) counted as 0 lost")
	}
}
