package load

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pool is a client's connection pool on one server: sessions opened while
// the server was well, kept idle, that all write the moment they are asked
// to (Burst), the way pooled application connections do when a paused
// server answers again.
type Pool struct {
	Client *Client
	IDs    *IDs
	// Addr is the server the sessions are open to.
	Addr     string
	sessions []*session
}

// Open opens n sessions to Addr.
func (p *Pool) Open(ctx context.Context, n int) error {
	for range n {
		s, err := p.Client.open(ctx, p.Addr)
		if err != nil {
			return fmt.Errorf("pool: %w", err)
		}
		p.sessions = append(p.sessions, s)
	}
	return nil
}

// Burst has every open session insert fresh ids into ProbeTable one after
// another, each within the client's Timeout, until the session's first
// error or until d has passed. It returns every attempt (writer "pool"),
// in start order; a session that failed is closed.
func (p *Pool) Burst(ctx context.Context, d time.Duration) []Attempt {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var all []Attempt
	var wg sync.WaitGroup
	for i, s := range p.sessions {
		wg.Go(func() {
			got := p.burstOne(ctx, s)
			mu.Lock()
			all = append(all, got...)
			if n := len(got); n > 0 && !got[n-1].OK {
				p.sessions[i] = nil
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	sortByStart(all)
	return all
}

func (p *Pool) burstOne(ctx context.Context, s *session) []Attempt {
	var out []Attempt
	if s == nil {
		return nil
	}
	for ctx.Err() == nil {
		a := Attempt{ID: p.IDs.Next(), Writer: "pool", Addr: s.addr, Site: s.site, Start: time.Now()}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Client.Timeout)
		err := s.exec(ectx, fmt.Sprintf("INSERT INTO %s (id, site) VALUES (%d, '%s')", ProbeTable, a.ID, s.site))
		cancel()
		a.End, a.OK = time.Now(), err == nil
		if err != nil {
			a.Err = err.Error()
			s.close()
			return append(out, a)
		}
		out = append(out, a)
	}
	return out
}

// Close closes the sessions still open.
func (p *Pool) Close() {
	for i, s := range p.sessions {
		if s != nil {
			s.close()
			p.sessions[i] = nil
		}
	}
}
