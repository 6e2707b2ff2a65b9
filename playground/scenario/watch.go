package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// sighting is the group's authority as one read of its status showed it.
type sighting struct {
	At     time.Time
	Active string
	Gen    int64
	// Writable lists the sites the status showed writable.
	Writable []string
}

// watcher reads the group's status every 200 ms in the background and keeps
// every change of the active site, generation or writable sites: when a
// promotion became visible, and whether a site was ever made active.
type watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	seen   []sighting
}

// watch starts a watcher; stop it with stop.
func (g *Group) watch(ctx context.Context) *watcher {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &watcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			if mg, err := g.Get(ctx); err == nil {
				w.add(sightingOf(mg, time.Now()))
			}
			_ = sleepCtx(ctx, 200*time.Millisecond)
		}
	}()
	return w
}

func sightingOf(mg *v1alpha1.MysqlFailoverGroup, at time.Time) sighting {
	s := sighting{At: at, Active: mg.Status.ActiveSite, Gen: mg.Status.TopologyGeneration}
	for _, st := range mg.Status.Sites {
		if st.State == v1alpha1.StateWritable {
			s.Writable = append(s.Writable, st.Name)
		}
	}
	return s
}

func (w *watcher) add(s sighting) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.seen); n > 0 {
		last := w.seen[n-1]
		if last.Active == s.Active && last.Gen == s.Gen && fmt.Sprint(last.Writable) == fmt.Sprint(s.Writable) {
			return
		}
	}
	w.seen = append(w.seen, s)
}

// stop ends the watcher and returns what it saw, in order.
func (w *watcher) stop() []sighting {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]sighting(nil), w.seen...)
}

// firstActive is the first sighting of site active at generation gen or later.
func firstActive(seen []sighting, site string, gen int64) (sighting, bool) {
	for _, s := range seen {
		if s.Active == site && s.Gen >= gen {
			return s, true
		}
	}
	return sighting{}, false
}

// history renders the sightings for a note, relative to t0.
func history(seen []sighting, t0 time.Time) string {
	out := ""
	for i, s := range seen {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%+.1fs %s@%d writable %v", s.At.Sub(t0).Seconds(), s.Active, s.Gen, s.Writable)
	}
	return out
}
