package sim

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// simGroup names the simulated failover group in views.
const simGroup = "sim"

// RealSidecar is a SidecarFactory that runs pkg/sidecar's Loop, the fencing
// decision the real sidecar makes, on the sim's logical clock.
func RealSidecar(s SidecarSettings, now time.Time) SidecarLoop {
	l, err := sidecar.NewLoop(sidecar.Settings{Namespace: simGroup, Group: simGroup, Site: s.Site,
		LeaseTimeout: s.LeaseTimeout, PeerCheckInterval: s.PeerCheckInterval}, now)
	if err != nil {
		panic(fmt.Sprintf("sim config validated, yet sidecar settings are not: %v", err))
	}
	return realSidecar{l}
}

type realSidecar struct{ l *sidecar.Loop }

func (r realSidecar) Tick(now time.Time, operator *View, peers []View, writable bool) (bool, string) {
	o := sidecar.Observation{Now: now, DB: sidecar.DBReadOnly}
	if writable {
		o.DB = sidecar.DBWritable
	}
	if operator != nil {
		o.Operator = sidecar.ViewReply(apiView(*operator))
	}
	for _, p := range peers {
		reply := sidecar.Reply{Kind: sidecar.ReplyNoView, Err: sidecar.ErrNoView}
		if p.Generation > 0 {
			reply = sidecar.ViewReply(apiView(p))
		}
		o.Peers = append(o.Peers, sidecar.PeerReply{Peer: p.From, Reply: reply})
	}
	d := r.l.Tick(o)
	return d.Fence, d.Reason
}

func (r realSidecar) View() View {
	v, ok := r.l.View()
	if !ok {
		return View{}
	}
	return View{Active: v.ActiveSite, Generation: v.Generation, ObservedAt: v.ObservedAt}
}

func apiView(v View) v1alpha1.ActiveSiteView {
	return v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: v.Active,
		Generation: v.Generation, ObservedAt: v.ObservedAt}
}

// RealConfirmer is a FenceConfirmer that applies pkg/failover's ConfirmFence.
// A fresh read-only or mysqld-down observation stands for the sidecar's report.
type RealConfirmer struct{}

// Confirm implements FenceConfirmer.
func (RealConfirmer) Confirm(ev Evidence) (bool, string) {
	fe := failover.Evidence{Site: ev.Site, Now: ev.Now, Active: ev.Active, FailingSince: ev.FailingSince,
		LastContact: ev.LastContact, PodGone: ev.PodGone,
		LeaseTimeout: ev.LeaseTimeout, PeerCheckInterval: ev.PeerCheckInterval}
	if ev.ObservedSafeAt.After(ev.UnfencedAt) {
		fe.Report = &failover.Report{At: ev.ObservedSafeAt, Generation: ev.Generation, Fenced: true}
	}
	for _, p := range ev.Peers {
		fe.Peers = append(fe.Peers, failover.PeerAdoption{Site: p.Site, PodGone: p.PodGone, GoneAt: p.GoneAt,
			Adopted: p.Adopted, At: p.At})
	}
	return failover.ConfirmFence(fe)
}

// UseRealCode makes a Config run pkg/sidecar's Loop, pkg/failover's fence
// confirmation, pkg/failover's emergency step machine and its planned-failover
// state machine instead of the package's models.
func UseRealCode(c *Config) {
	c.Sidecar = RealSidecar
	c.Confirmer = RealConfirmer{}
	c.Emergency = NewRealEmergency()
	c.Planned = NewRealPlanned()
}
