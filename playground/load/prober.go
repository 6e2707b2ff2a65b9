package load

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Prober tries a tiny write on every site directly, every Interval, as the
// application account, and records which sites accepted it when. It keeps one
// session per site and reconnects after any error (or opens one per probe:
// Fresh).
type Prober struct {
	Client *Client
	IDs    *IDs
	// Sites returns each site's current address (its Pod's mysqld); it is
	// asked again whenever a session has to be opened.
	Sites    func() map[string]string
	Interval time.Duration
	// Fresh opens a new session for every probe and closes it after, like
	// an application without a pool: a server that refuses new sessions, or
	// kills them, cannot hide behind one that was opened before.
	Fresh bool
	// OnAttempt, when set, sees every probe as it ends (from many goroutines).
	OnAttempt func(Attempt)
}

// Run probes until ctx ends and returns every probe.
func (p *Prober) Run(ctx context.Context) []Attempt {
	var mu sync.Mutex
	var all []Attempt
	var wg sync.WaitGroup
	for site := range p.Sites() {
		wg.Go(func() {
			got := p.runSite(ctx, site)
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	sortByStart(all)
	return all
}

func (p *Prober) runSite(ctx context.Context, site string) []Attempt {
	var out []Attempt
	var s *session
	defer func() {
		if s != nil {
			s.close()
		}
	}()
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		a := Attempt{ID: p.IDs.Next(), Writer: "probe", Site: site, Start: time.Now()}
		s = p.probe(ctx, s, site, &a)
		a.End = time.Now()
		if ctx.Err() != nil && !a.OK {
			break
		}
		out = append(out, a)
		if p.OnAttempt != nil {
			p.OnAttempt(a)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return out
}

func (p *Prober) probe(ctx context.Context, s *session, site string, a *Attempt) *session {
	if s == nil {
		addr, ok := p.Sites()[site]
		if !ok || addr == "" {
			a.Err = "no address for the site"
			return nil
		}
		a.Addr = addr
		var err error
		if s, err = p.Client.open(ctx, addr); err != nil {
			a.Err = err.Error()
			return nil
		}
	}
	a.Addr = s.addr
	ectx, cancel := context.WithTimeout(ctx, p.Client.Timeout)
	defer cancel()
	err := s.exec(ectx, fmt.Sprintf("INSERT INTO %s (id, site) VALUES (%d, '%s')", ProbeTable, a.ID, site))
	if err != nil {
		a.Err = err.Error()
	}
	a.OK = err == nil
	if err != nil || p.Fresh {
		s.close()
		return nil
	}
	return s
}
