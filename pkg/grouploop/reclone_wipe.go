package grouploop

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Before a reclone replaces a site's data (Cloning), the site must stop
// acknowledging, and another replica must hold what it holds: a commit
// acknowledged by the site alone would otherwise leave the group with its
// datadir. The operator stops the site's replication by SQL, waits a pass
// so that the next observation shows all the site holds, and then asks
// topology.RecloneMayWipe. Until Cloning begins, maintain does not restart
// the site's replication (recloneKeepsStopped); a restart of the site's
// mysqld does (no skip_slave_start), so an observation showing replication
// running is never judged and starts the wait again
// (topology.RecloneStillReplicates). recloneStopped lives in memory: a
// restarted operator stops the replication again and judges the
// observation of the pass after.

type replicationStopper interface {
	StopReplication(ctx context.Context, site string) error
}

// recloneID identifies a reclone to the sidecar and to recloneStopped:
// its request and when it was accepted.
func recloneID(r *v1alpha1.SiteRecovery) string {
	if r.StartTime == nil {
		return r.Request
	}
	return r.Request + "@" + r.StartTime.UTC().Format("20060102T150405Z")
}

// mayWipe says why site's data may not be replaced yet, "" when it may.
func (l *Loop) mayWipe(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) string {
	id := recloneID(site.Recovery)
	view, _ := p.Input.Site(site.Name)
	cctx, cancel := context.WithTimeout(ctx, callTimeout(p))
	err := l.stopper.StopReplication(cctx, site.Name)
	cancel()
	still := topology.RecloneStillReplicates(p.Input, site.Name)
	switch {
	case err != nil && view.MayAcknowledge:
		// Under dataDurability required it may hold acknowledged commits
		// and keep acknowledging: it must answer first.
		l.recloneStopped = ""
		return fmt.Sprintf("%s may acknowledge commits and its replication could not be stopped: %v", site.Name, err)
	case err != nil && view.State != v1alpha1.StateUnreachable:
		l.recloneStopped = ""
		return fmt.Sprintf("stop %s's replication: %v", site.Name, err)
	case still != "":
		// Stopped again above; the wait starts over, as after a restart.
		l.recloneStopped = ""
		return still + "; stopped again, judged once observed stopped"
	case err == nil && l.recloneStopped != id:
		l.recloneStopped = id
		return fmt.Sprintf("%s's replication stopped; judged on the next observation", site.Name)
	}
	div, perr := gtid.ParseSet(site.Recovery.DivergentGtid)
	if perr != nil {
		return fmt.Sprintf("divergentGtid unreadable: %v", perr)
	}
	return topology.RecloneMayWipe(p.Input, site.Name, div)
}

// callTimeout bounds one SQL call of the pass.
func callTimeout(p failover.Pass) time.Duration {
	if p.Settings.CallTimeout > 0 {
		return p.Settings.CallTimeout
	}
	return 5 * time.Second
}

// recloneKeepsStopped reports whether maintain must leave site's
// replication as it is: its reclone is saving or replacing its data.
func recloneKeepsStopped(g *v1alpha1.MysqlFailoverGroup, site string) bool {
	r := failover.SiteStatusOf(&g.Status, site).Recovery
	return r != nil && (r.Phase == v1alpha1.RecoveryPreservingData || r.Phase == v1alpha1.RecoveryCloning)
}

// mayStartClone judges again, right before the site's sidecar is first
// asked to replace its data, that it may be (mayWipe: Cloning was
// persisted a pass or more ago, an operator restart may have come
// between, and commits may have reached the site meanwhile). Once it
// passes, recovery.cloneStarted is persisted before the sidecar is asked:
// a restarted operator then never judges again a site whose data may
// already be gone (it would wait for ever, or judge on nothing), and never
// skips the judgement before the first ask.
func (l *Loop) mayStartClone(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) bool {
	r := site.Recovery
	if r.CloneStarted {
		return true
	}
	if why := l.mayWipe(ctx, p, site); why != "" {
		if r.Message != "waiting to clone: "+why {
			r.Message = "waiting to clone: " + why
			l.log.Info("reclone waits before replacing the data", "site", site.Name, "why", why)
			if err := l.patcher.PersistStatus(ctx, p.Group); err != nil {
				l.log.Error(err, "persist the reclone's wait", "site", site.Name)
			}
		}
		return false
	}
	r.CloneStarted = true
	r.Message = "replacing the data with a clone of " + r.Donor
	if err := l.patcher.PersistStatus(ctx, p.Group); err != nil {
		r.CloneStarted = false
		l.log.Error(err, "persist the clone's start", "site", site.Name)
		return false
	}
	return true
}

// recloneRepoints reports whether maintain points site at the active site
// although it is marked diverged: its reclone is in CatchingUp, so its
// data is a clone of a healthy site's, and the mark belongs to the data it
// held before (it goes when the site rejoins). Without this, a diverged
// site's clone would never replicate, and never rejoin.
func recloneRepoints(g *v1alpha1.MysqlFailoverGroup, site string) bool {
	r := failover.SiteStatusOf(&g.Status, site).Recovery
	return r != nil && r.Phase == v1alpha1.RecoveryCatchingUp
}
