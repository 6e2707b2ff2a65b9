package controller

import (
	"time"

	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
)

var t0 = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

// TestAdoptionWakesTheLoop: a promotion waits for the target's sidecar to
// hold the new generation, and used to look again only at its next poll.
// Serving a sidecar a generation higher than one served to it before now
// wakes its group's loop at once; the first view after a start, serving it
// again, an older generation, an anonymous caller or no loop at all wakes
// nothing.
func TestAdoptionWakesTheLoop(t *testing.T) {
	orders := types.NamespacedName{Namespace: "shop", Name: "orders"}
	other := types.NamespacedName{Namespace: "shop", Name: "carts"}
	type serve struct {
		group types.NamespacedName
		site  string
		gen   int64
	}
	cases := []struct {
		name  string
		first []serve // served before the one looked at
		then  serve
		wake  bool
	}{
		{"the first view served after a start", nil, serve{orders, "b", 3}, false},
		{"a new generation for the target", []serve{{orders, "b", 1}}, serve{orders, "b", 2}, true},
		{"the same generation again", []serve{{orders, "b", 2}}, serve{orders, "b", 2}, false},
		{"an older generation", []serve{{orders, "b", 3}}, serve{orders, "b", 2}, false},
		{"another site's new generation, one its peer has", []serve{{orders, "a", 1}, {orders, "b", 1}, {orders, "a", 2}},
			serve{orders, "b", 2}, true},
		{"an anonymous caller", []serve{{orders, "", 1}}, serve{orders, "", 5}, false},
		{"a group without a loop", []serve{{other, "b", 1}}, serve{other, "b", 2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := authority.NewRegistry(func() time.Time { return t0 })
			wake := make(chan struct{}, 1)
			o := &Operator{loops: map[types.NamespacedName]*loopHandle{orders: {wake: wake}}}
			r.NotifyOnAdoption(o.Wake)
			view := func(s serve) v1alpha1.ActiveSiteView {
				return v1alpha1.ActiveSiteView{Namespace: s.group.Namespace, Group: s.group.Name, ActiveSite: "b", Generation: s.gen}
			}
			for _, s := range c.first {
				r.Serve(view(s), s.site, nil)
			}
			select { // what the earlier serves did is not looked at
			case <-wake:
			default:
			}
			r.Serve(view(c.then), c.then.site, nil)
			select {
			case <-wake:
				if !c.wake {
					t.Errorf("the loop was woken")
				}
			default:
				if c.wake {
					t.Errorf("the loop was not woken")
				}
			}
		})
	}
}
