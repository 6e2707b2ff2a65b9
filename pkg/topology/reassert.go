package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// reassertUnsafe says why the read-only active site a may not simply be made
// writable again, "" when it may. A re-assert is safe only when a holds every
// transaction written under its own source id that another site holds: a
// primary that came back without a tail its replicas received would write
// new transactions under the same GTIDs, and the replicas' copies would
// silently diverge. With a's source id unknown, a must hold everything the
// other sites hold. A site flagged diverged (errant, or outside the
// authority's history) does not count, and a itself must not be diverged.
func reassertUnsafe(in Input, a SiteView) string {
	if a.Diverged {
		return fmt.Sprintf("active site %s holds transactions outside the authority's history", a.Name)
	}
	var holders []string
	var lacks gtid.Set
	for _, o := range in.Sites {
		if o.Name == a.Name || o.Diverged || o.Executed.IsEmpty() {
			continue
		}
		want := o.Executed
		if a.ServerID != "" {
			want = want.Only(a.ServerID)
		}
		if miss := gtid.Lacks(a.Executed, want); !miss.IsEmpty() {
			holders = append(holders, o.Name)
			lacks = lacks.Union(miss)
		}
	}
	if len(holders) == 0 {
		return ""
	}
	return fmt.Sprintf("active site %s lacks %s (%d transactions) that %s hold; re-asserting it would write under those GTIDs again",
		a.Name, lacks, lacks.Count(), strings.Join(holders, ", "))
}

// failoverInstead is the decision for a read-only active site that may not
// be re-asserted: a failover to the freshest eligible site, or the reason
// none may run now. It never makes a itself writable.
func failoverInstead(in Input, a SiteView, why string) Decision {
	d := decideFailover(in, a)
	if d.Target == a.Name {
		return blocked(KindNoPrimary, v1alpha1.ReasonReassertUnsafe, a.Name, why+"; no other site can take over")
	}
	if d.Kind == KindFailover {
		d.Reason = v1alpha1.ReasonReassertUnsafe
	}
	d.Message = why + ": " + d.Message
	return d
}

// staleActive is the decision for a read-only active site whose GTIDs come
// from an earlier probe: whether it may be re-asserted is judged on fresh
// GTIDs only, so it waits for the next probe.
func staleActive(a SiteView) Decision {
	return blocked(KindNoPrimary, v1alpha1.ReasonNotReady, a.Name,
		fmt.Sprintf("active site %s is read-only, but its last probe failed: waiting for fresh GTIDs to judge a re-assert", a.Name))
}
