package authority

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRegistryRunEndsWithoutCrossClock: the registry ends a run of reports
// when a Pod listing shows another sidecar process, without comparing the
// API server's or a kubelet's times with the operator's clock. Here the
// kubelet and API server clocks run 5 s behind the operator's: before, a
// new Pod or a restarted container whose times (read on those clocks) fell
// before the run's start plus one second was missed, and the old process's
// adoption kept bounding the old primary's lease deadline.
func TestRegistryRunEndsWithoutCrossClock(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	skew := -5.0 // kubelet/API server clock minus the operator's, in seconds
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	pod := func(uid string, restarts int32, started float64) []PodRef {
		ref := PodRef{UID: types.UID(uid), SidecarRestarts: restarts}
		if started != 0 {
			ref.SidecarStarted = at(started + skew)
		}
		return []PodRef{ref}
	}
	type op struct {
		at   float64
		boot string // a report of generation 4 from process boot, unless pods is set
		pods []PodRef
	}
	adopted := func(s float64) topology.PeerAdoption { return topology.PeerAdoption{Adopted: true, At: at(s)} }
	cases := []struct {
		name string
		ops  []op
		want topology.PeerAdoption
	}{
		{"an unchanged Pod keeps the run", []op{{at: 0, pods: pod("a", 0, -90)}, {at: 5, boot: "b1"},
			{at: 10, pods: pod("a", 0, -90)}}, adopted(5)},
		{"a new Pod UID ends the run whatever its times say", []op{{at: 0, pods: pod("a", 0, -90)}, {at: 5, boot: "b1"},
			{at: 10, pods: pod("b", 0, 8)}}, topology.PeerAdoption{}},
		{"a Pod first listed after the run began ends it", []op{{at: 5, boot: "b1"},
			{at: 10, pods: pod("a", 0, -90)}}, topology.PeerAdoption{}},
		{"a sidecar start that changed ends the run, restart count unchanged", []op{{at: 0, pods: pod("a", 0, -90)},
			{at: 5, boot: "b1"}, {at: 10, pods: pod("a", 0, 7)}}, topology.PeerAdoption{}},
		{"a restart count that grew ends the run", []op{{at: 0, pods: pod("a", 0, -90)}, {at: 5, boot: "b1"},
			{at: 10, pods: pod("a", 1, -90)}}, topology.PeerAdoption{}},
		{"a sidecar no longer running ends the run", []op{{at: 0, pods: pod("a", 0, -90)}, {at: 5, boot: "b1"},
			{at: 10, pods: pod("a", 0, 0)}}, topology.PeerAdoption{}},
		{"a run begun after the new Pod was listed survives the next listing", []op{{at: 0, pods: pod("a", 0, -90)},
			{at: 4, pods: pod("b", 0, 3)}, {at: 5, boot: "b2"}, {at: 10, pods: pod("b", 0, 3)}}, adopted(5)},
		{"a new boot id ends the run; the new process counts from its report", []op{{at: 0, pods: pod("a", 0, -90)},
			{at: 5, boot: "b1"}, {at: 12, boot: "b2"}, {at: 14, pods: pod("a", 0, -90)}}, adopted(12)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			reg := NewRegistry(func() time.Time { return now })
			view := v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "pdx", Generation: 4}
			for _, o := range c.ops {
				now = at(o.at)
				if o.pods == nil {
					reg.Serve(view, "fra", &topology.Report{Generation: 4, Boot: o.boot})
					continue
				}
				reg.SawPods(key, "fra", o.pods)
			}
			got := reg.Sidecar(key, "fra").Peer("fra", 4, time.Time{}, time.Time{}, false)
			if !got.Adopted {
				got.At = time.Time{}
			}
			got.GoneAt = time.Time{} // the run is what this test is about
			c.want.Site = "fra"
			if got != c.want {
				t.Fatalf("peer = %+v\nwant   %+v", got, c.want)
			}
		})
	}
}
