package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// sqlDownAfter is how many checks in a row a site's mysqld must fail to
// count as down: one failed login on a loaded machine is not an outage,
// a restart is several seconds of them.
const sqlDownAfter = 3

// siteSample is one look at every site.
type siteSample struct {
	At time.Time
	// Down names the sites that were down, with why.
	Down map[string]string
	// Pods maps each site to the names of its live Pods.
	Pods map[string][]string
	// Phase, Message, Active and Gen are the group's status at the time.
	Phase   v1alpha1.GroupPhase
	Message string
	Active  string
	Gen     int64
}

// siteWatch looks at every site of a group every 250 ms or so, in the
// background: a site is up when it has a running Pod that is Ready and not
// being deleted, and its mysqld accepted the application account's login
// (and answered SELECT 1) in one of its last sqlDownAfter checks. It keeps
// every sample, and the group's status phase alongside.
type siteWatch struct {
	g      *Group
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []siteSample
	sql     map[string]sqlState
}

// watchSites starts a siteWatch; stop it with stop.
func (g *Group) watchSites(ctx context.Context) (*siteWatch, error) {
	acct, err := g.Account(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &siteWatch{g: g, cancel: cancel, done: make(chan struct{}), sql: map[string]sqlState{}}
	c := g.client(acct, 2*time.Second)
	var wg sync.WaitGroup
	for _, site := range g.Sites {
		wg.Go(func() { w.checkSQL(ctx, site, c.QueryInt) })
	}
	wg.Go(func() { w.sample(ctx) })
	go func() { wg.Wait(); close(w.done) }()
	return w, nil
}

// sqlState is the latest run of failed logins to a site's mysqld.
type sqlState struct {
	fails int
	err   error
}

// sample records every site's state every 250 ms.
func (w *siteWatch) sample(ctx context.Context) {
	for ctx.Err() == nil {
		s := siteSample{At: time.Now(), Down: map[string]string{}, Pods: map[string][]string{}}
		podDown := w.checkPods(ctx, &s)
		if mg, err := w.g.Get(ctx); err == nil {
			st := mg.Status
			s.Phase, s.Message, s.Active, s.Gen = st.Phase, st.Message, st.ActiveSite, st.TopologyGeneration
		}
		w.mu.Lock()
		for _, site := range w.g.Sites {
			if q := w.sql[site]; q.fails >= sqlDownAfter {
				s.Down[site] = fmt.Sprintf("mysqld: %d logins failed: %v", q.fails, q.err)
			}
			if why, ok := podDown[site]; ok {
				s.Down[site] = why
			}
		}
		if ctx.Err() == nil {
			w.samples = append(w.samples, s)
		}
		w.mu.Unlock()
		_ = sleepCtx(ctx, 250*time.Millisecond)
	}
}

// checkSQL logs in to a site's mysqld every 250 ms and keeps count of the
// failures in a row.
func (w *siteWatch) checkSQL(ctx context.Context, site string, query func(context.Context, string, string) (int64, error)) {
	for ctx.Err() == nil {
		var err error
		if addr := w.g.SiteAddrs()[site]; addr == "" {
			err = fmt.Errorf("no address")
		} else {
			_, err = query(ctx, addr, "SELECT 1")
		}
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		q := w.sql[site]
		if err != nil {
			q.fails, q.err = q.fails+1, err
		} else {
			q = sqlState{}
		}
		w.sql[site] = q
		w.mu.Unlock()
		_ = sleepCtx(ctx, 250*time.Millisecond)
	}
}

// checkPods lists the group's Pods, records them in s, and says why each
// site without a Ready Pod is down. A failed list says nothing.
func (w *siteWatch) checkPods(ctx context.Context, s *siteSample) map[string]string {
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pods, err := w.g.e.C.Client.CoreV1().Pods(w.g.NS).List(lctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelSite})
	if err != nil {
		return nil
	}
	ready := map[string]bool{}
	for _, p := range pods.Items {
		site := p.Labels[v1alpha1.LabelSite]
		if p.DeletionTimestamp != nil {
			continue
		}
		s.Pods[site] = append(s.Pods[site], p.Name)
		if p.Status.Phase == corev1.PodRunning && podReady(&p) {
			ready[site] = true
		}
	}
	out := map[string]string{}
	for _, site := range w.g.Sites {
		if !ready[site] {
			out[site] = fmt.Sprintf("no Ready Pod (live: %v)", s.Pods[site])
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stop ends the watch and returns its samples, in order.
func (w *siteWatch) stop() []siteSample {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]siteSample(nil), w.samples...)
}

// downSpan is a stretch during which a site was down.
type downSpan struct {
	Site     string
	From, To time.Time
	Why      string
}

// downSpans are every site's down stretches, from the first sample that
// saw it down to the first that saw it up again (or the last sample).
func downSpans(samples []siteSample) []downSpan {
	var out []downSpan
	open := map[string]*downSpan{}
	for _, s := range samples {
		for site, why := range s.Down {
			if open[site] == nil {
				open[site] = &downSpan{Site: site, From: s.At, Why: why}
			}
			open[site].To = s.At
		}
		for site, d := range open {
			if _, down := s.Down[site]; !down {
				d.To = s.At
				out = append(out, *d)
				delete(open, site)
			}
		}
	}
	for _, d := range open {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out
}

// twoDown returns the samples in which more than one site was down.
func twoDown(samples []siteSample) []siteSample {
	var out []siteSample
	for _, s := range samples {
		if len(s.Down) > 1 {
			out = append(out, s)
		}
	}
	return out
}

// describeDown renders a sample's down sites.
func describeDown(s siteSample) string {
	var parts []string
	for site, why := range s.Down {
		parts = append(parts, site+": "+why)
	}
	sort.Strings(parts)
	return s.At.Format(tsLayout) + " " + strings.Join(parts, "; ")
}

const tsLayout = "15:04:05.000"
