package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// TestRegistryRestartedSidecar is issue 13's path 1 at the registry: fra's
// sidecar reported holding generation 4 (a view naming pdx), then its
// container alone restarted in the same Pod. The new process may not have
// heard the operator, so the old process's adoption must not bound the old
// primary's lease deadline any more: the run ends, and the new process
// counts only from its own report.
func TestRegistryRestartedSidecar(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	pod := func(restarts int32, started float64) []podRef {
		return []podRef{{UID: "a", Created: at(-100), SidecarRestarts: restarts, SidecarStarted: at(started)}}
	}
	type op struct {
		at   float64
		boot string // a report of generation gen from process boot
		gen  int64
		pods []podRef
	}
	cases := []struct {
		name string
		ops  []op
		want failover.PeerAdoption
	}{
		{"the same process keeps its run", []op{{at: 0, pods: pod(0, -90)}, {at: 5, boot: "b1", gen: 4},
			{at: 7, boot: "b1", gen: 4}, {at: 9, pods: pod(0, -90)}}, failover.PeerAdoption{Adopted: true, At: at(5)}},
		{"a new boot id ends the run; the new process counts from its report", []op{{at: 0, pods: pod(0, -90)},
			{at: 5, boot: "b1", gen: 4}, {at: 12, boot: "b2", gen: 4}}, failover.PeerAdoption{Adopted: true, At: at(12)}},
		{"a restart count that grew ends the run", []op{{at: 0, pods: pod(0, -90)}, {at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(1, -90)}}, failover.PeerAdoption{}},
		{"a sidecar container started after the run began ends it", []op{{at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(0, 8)}}, failover.PeerAdoption{}},
		{"a container started before the run leaves it", []op{{at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(0, 2)}}, failover.PeerAdoption{Adopted: true, At: at(5)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			reg := NewRegistry(func() time.Time { return now })
			view := v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "pdx", Generation: 4}
			for _, o := range c.ops {
				now = at(o.at)
				if o.pods == nil {
					reg.Serve(view, "fra", &failover.Report{Generation: o.gen, Boot: o.boot})
					continue
				}
				reg.sawPods(key, "fra", o.pods)
			}
			got := reg.sidecar(key, "fra").peer("fra", 4, true)
			if !got.Adopted {
				got.At = time.Time{}
			}
			c.want.Site = "fra"
			if got != c.want {
				t.Fatalf("peer = %+v\nwant   %+v", got, c.want)
			}
		})
	}
}
