package authority

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRegistryPeerAdoption pins what the registry tells the lease deadline
// about another site's sidecar: when it was first seen, by its own report,
// holding the current generation (4 here), and when its Pod went away. A
// report of one Pod's sidecar never counts for another Pod.
func TestRegistryPeerAdoption(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type op struct {
		at   float64
		rep  int64    // generation reported, unless pods is set
		pods []PodRef // a listing; PodRef{} alone lists no Pod
	}
	report := func(s float64, gen int64) op { return op{at: s, rep: gen} }
	list := func(s float64, pods ...PodRef) op {
		if len(pods) == 0 {
			pods = []PodRef{{}}
		}
		return op{at: s, pods: pods}
	}
	pod := func(uid string, _ float64) PodRef { return PodRef{UID: types.UID(uid)} }
	cases := []struct {
		name   string
		ops    []op
		listed bool
		want   topology.PeerAdoption
	}{
		{"first report of the current generation", []op{list(0, pod("a", -100)), report(5, 3), report(7, 4), report(9, 4)},
			true, topology.PeerAdoption{Adopted: true, At: at(7)}},
		{"a report of an older generation is not adoption", []op{list(0, pod("a", -100)), report(5, 3)},
			true, topology.PeerAdoption{}},
		{"a served view without a report is not adoption", []op{list(0, pod("a", -100))},
			true, topology.PeerAdoption{}},
		{"a later generation counts", []op{list(0, pod("a", -100)), report(5, 5)},
			true, topology.PeerAdoption{Adopted: true, At: at(5)}},
		{"a new Pod ends the old Pod's run", []op{list(0, pod("a", -100)), report(5, 4), list(10, pod("b", 8))},
			true, topology.PeerAdoption{GoneAt: at(10)}},
		{"the new Pod counts from its own report", []op{list(0, pod("a", -100)), report(5, 4), list(10, pod("b", 8)),
			report(12, 0), report(14, 4)}, true, topology.PeerAdoption{GoneAt: at(10), Adopted: true, At: at(14)}},
		{"the new Pod repeating the old Pod's generation counts from after it was listed", []op{list(0, pod("a", -100)),
			report(5, 4), list(10, pod("b", 8)), report(12, 4), report(14, 4)},
			true, topology.PeerAdoption{GoneAt: at(10), Adopted: true, At: at(12)}},
		{"a new Pod's first listing ends a run, whenever the Pod started", []op{list(0, pod("a", -100)),
			report(5, 0), report(7, 4), list(10, pod("b", 2))},
			true, topology.PeerAdoption{GoneAt: at(10)}},
		{"Pod gone before reporting the generation", []op{list(0, pod("a", -100)), report(5, 3), list(10)},
			true, topology.PeerAdoption{PodGone: true, GoneAt: at(10)}},
		{"Pod gone after reporting the generation", []op{list(0, pod("a", -100)), report(5, 4), list(10)},
			true, topology.PeerAdoption{PodGone: true, GoneAt: at(10), Adopted: true, At: at(5)}},
		{"gone counts from the kubelet proof, not the first listing without the Pod", []op{list(0, pod("a", -100)),
			list(10), list(12)}, true, topology.PeerAdoption{PodGone: true, GoneAt: at(12)}},
		{"a site never listed with a Pod is not gone", []op{list(0), list(2)},
			true, topology.PeerAdoption{}},
		{"without this pass's listing or the kubelet proof no Pod counts as gone", []op{list(0, pod("a", -100)), list(10)},
			false, topology.PeerAdoption{GoneAt: at(10)}},
	}
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			reg := NewRegistry(func() time.Time { return now })
			view := v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "pdx", Generation: 4}
			for _, o := range c.ops {
				now = at(o.at)
				if o.pods == nil {
					reg.Serve(view, "fra", &topology.Report{Generation: o.rep})
					continue
				}
				var pods []PodRef
				for _, p := range o.pods {
					if p.UID != "" {
						pods = append(pods, p)
					}
				}
				reg.SawPods(key, "fra", pods)
			}
			var stopped time.Time // the kubelet proof (grouploop's podgone.go), here from the last listing on
			if c.listed {
				stopped = now
			}
			got := reg.Sidecar(key, "fra").Peer("fra", 4, stopped, time.Time{}, false)
			c.want.Site = "fra"
			if !got.Adopted {
				got.At = time.Time{} // meaningless without adoption
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("peer = %+v\nwant   %+v", got, c.want)
			}
		})
	}
}
