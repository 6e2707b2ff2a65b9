package authority

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
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
	pod := func(restarts int32, started float64) []PodRef {
		return []PodRef{{UID: "a", SidecarRestarts: restarts, SidecarStarted: at(started)}}
	}
	type op struct {
		at   float64
		boot string // a report of generation gen from process boot
		gen  int64
		pods []PodRef
	}
	cases := []struct {
		name string
		ops  []op
		want topology.PeerAdoption
	}{
		{"the same process keeps its run", []op{{at: 0, pods: pod(0, -90)}, {at: 5, boot: "b1", gen: 4},
			{at: 7, boot: "b1", gen: 4}, {at: 9, pods: pod(0, -90)}}, topology.PeerAdoption{Adopted: true, At: at(5)}},
		{"a new boot id ends the run; the new process counts from its report", []op{{at: 0, pods: pod(0, -90)},
			{at: 5, boot: "b1", gen: 4}, {at: 12, boot: "b2", gen: 4}}, topology.PeerAdoption{Adopted: true, At: at(12)}},
		{"a restart count that grew ends the run", []op{{at: 0, pods: pod(0, -90)}, {at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(1, -90)}}, topology.PeerAdoption{}},
		{"a sidecar container whose start changed ends it", []op{{at: 0, pods: pod(0, -90)}, {at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(0, 8)}}, topology.PeerAdoption{}},
		{"a container listed unchanged leaves it", []op{{at: 0, pods: pod(0, 2)}, {at: 5, boot: "b1", gen: 4},
			{at: 10, pods: pod(0, 2)}}, topology.PeerAdoption{Adopted: true, At: at(5)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			reg := NewRegistry(func() time.Time { return now })
			view := v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "pdx", Generation: 4}
			for _, o := range c.ops {
				now = at(o.at)
				if o.pods == nil {
					reg.Serve(view, "fra", &topology.Report{Generation: o.gen, Boot: o.boot})
					continue
				}
				reg.SawPods(key, "fra", o.pods)
			}
			got := reg.Sidecar(key, "fra").Peer("fra", 4, time.Time{}, time.Time{}, false)
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

// TestPath1ThreeSites is issue 13's path 1 end to end at the evidence the
// operator judges by: iad (A) was primary at generation 3; the operator
// published 4 naming pdx (B); fra's (C) sidecar reported holding 4 at 5 s.
// Then fra's sidecar container alone restarted (10 s) on an island with iad,
// away from the operator and pdx. The new process may serve iad's old view
// back and renew its lease, so iad's lease deadline must not pass while fra
// has not reported again; once the new process reports 4, it counts from then.
func TestPath1ThreeSites(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	now := t0
	reg := NewRegistry(func() time.Time { return now })
	view := v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "pdx", Generation: 4}
	pod := func(restarts int32, started float64) []PodRef {
		return []PodRef{{UID: "fra-1", SidecarRestarts: restarts, SidecarStarted: at(started)}}
	}
	reg.SawPods(key, "fra", pod(0, -90))
	now = at(5)
	reg.Serve(view, "fra", &topology.Report{Generation: 4, Boot: "first"})
	now = at(12)
	reg.SawPods(key, "fra", pod(1, 10)) // the container restarted at 10 s
	evidence := func(s float64) topology.Evidence {
		return topology.Evidence{Site: "iad", Active: "pdx", Operator: reg.OperatorID(), Now: at(s), FailingSince: at(0),
			LastContact: at(0), LeaseTimeout: 20 * time.Second, PeerCheckInterval: 5 * time.Second,
			Peers: []topology.PeerAdoption{{Site: "pdx", Adopted: true, At: at(1)},
				reg.Sidecar(key, "fra").Peer("fra", 4, time.Time{}, time.Time{}, false)}}
	}
	// Before the fix the deadline was 5 + 20 + 5 = 30 s, from the old process's report.
	if ok, by := topology.ConfirmFence(evidence(600)); ok {
		t.Fatalf("iad confirmed unable to write by %s while fra's new sidecar may renew its lease", by)
	}
	now = at(700)
	reg.Serve(view, "fra", &topology.Report{Generation: 4, Boot: "second"})
	if ok, _ := topology.ConfirmFence(evidence(725)); ok {
		t.Fatal("confirmed before the new process's report + leaseTimeout + peerCheckInterval")
	}
	if ok, by := topology.ConfirmFence(evidence(725.01)); !ok || by != topology.ConfirmedByLease {
		t.Fatalf("past the deadline counted from the new process: %v %q", ok, by)
	}
}
