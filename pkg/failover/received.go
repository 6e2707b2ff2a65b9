package failover

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Candidates are ranked by what they received as well as what they applied
// (topology.Holdings), so the target of an emergency failover may have been
// chosen for transactions still in its relay log. A relay log does not
// always survive until the promotion: a mysqld restart, or a replication
// reset, since the probe drops it while the probe's received set (MariaDB's
// Gtid_IO_Pos above all) may still name what it held. So after the drain
// the target's executed set is read, and it is promoted only when it holds
// what it was ranked on (topology.DrainedShort). When it does not, the pass
// waits, and this memory tells the next passes that the received set the
// target's probe shows is not held (Replication.ReceivedLost): it is
// ranked on its executed set, and Decide retargets when another candidate
// holds more.

// receivedLost is what Emergency remembers of relay logs found not to hold
// what their site's probe showed received: site to that received set.
type receivedLost map[string]string

// ReceivedLost reports whether site's received set, as its probe shows it
// now, is the one a drain found its relay log did not hold. The poll loop
// sets topology.Replication.ReceivedLost from it. Anything received since
// (another set) counts again. A nil sequence remembers nothing.
func (e *Emergency) ReceivedLost(site string, retrieved gtid.Set) bool {
	if e == nil {
		return false
	}
	got, ok := e.lostRelay[site]
	return ok && got == retrieved.String()
}

// checkDrained reads the target after the drain when it was credited with
// transactions it had not applied, and says why it may not be promoted on
// this pass: its executed set could not be read, or lacks what it was
// ranked on. "" when it holds all of it, or nothing was credited.
func (e *Emergency) checkDrained(ctx context.Context, p Pass, it *v1alpha1.FailoverIntent) string {
	to, _ := p.Input.Site(it.To)
	if topology.Unapplied(to).IsEmpty() {
		return ""
	}
	cctx, cancel := e.call(ctx, p)
	_, after, err := e.env.DB.SalvageRead(cctx, it.To)
	cancel()
	if err != nil {
		return fmt.Sprintf("%s was ranked on transactions in its relay log, and its executed set could not be read after the drain: %v",
			it.To, err)
	}
	short := topology.DrainedShort(to, after)
	if short.IsEmpty() {
		return ""
	}
	if e.lostRelay == nil {
		e.lostRelay = receivedLost{}
	}
	e.lostRelay[it.To] = to.Replication.Retrieved.String()
	msg := fmt.Sprintf("%s's relay log did not hold %s (%d transactions) its probe showed received: "+
		"not promoted on it; the candidates are ranked again without it", it.To, short, short.Count())
	e.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventRelayLogShort, msg)
	return msg
}
