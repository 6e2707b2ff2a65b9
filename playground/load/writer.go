package load

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Writers are application-like clients: each inserts one fresh id at a time
// into LoadTable through Target, keeps its connection while it works, and on
// any error drops it and connects again (resolving the target again).
type Writers struct {
	Client *Client
	Target Target
	IDs    *IDs
	// N writers, each pausing Pause between attempts.
	N     int
	Pause time.Duration
	// OnAttempt, when set, sees every attempt as it ends (from many goroutines).
	OnAttempt func(Attempt)
}

// Run writes until ctx ends and returns every attempt.
func (w *Writers) Run(ctx context.Context) []Attempt {
	var mu sync.Mutex
	var all []Attempt
	var wg sync.WaitGroup
	for i := range w.N {
		wg.Go(func() {
			got := w.runOne(ctx, fmt.Sprintf("w%d", i))
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	sortByStart(all)
	return all
}

func (w *Writers) runOne(ctx context.Context, name string) []Attempt {
	var out []Attempt
	var s *session
	defer func() {
		if s != nil {
			s.close()
		}
	}()
	for ctx.Err() == nil {
		a := Attempt{ID: w.IDs.Next(), Writer: name, Start: time.Now()}
		s = w.attempt(ctx, s, &a)
		a.End = time.Now()
		if ctx.Err() != nil && !a.OK {
			break // cut short by the end of the run: not a failure of the group
		}
		out = append(out, a)
		if w.OnAttempt != nil {
			w.OnAttempt(a)
		}
		sleep(ctx, w.Pause)
	}
	return out
}

// attempt writes a.ID through s, opening a session first when s is nil, and
// returns the session to use next (nil after any error).
func (w *Writers) attempt(ctx context.Context, s *session, a *Attempt) *session {
	if s == nil {
		rctx, cancel := context.WithTimeout(ctx, w.Client.Timeout)
		addr, err := w.Target.Addr(rctx)
		cancel()
		if err != nil {
			a.Err = err.Error()
			return nil
		}
		a.Addr = addr
		if s, err = w.Client.open(ctx, addr); err != nil {
			a.Err = err.Error()
			return nil
		}
	}
	a.Addr, a.Site = s.addr, s.site
	ectx, cancel := context.WithTimeout(ctx, w.Client.Timeout)
	defer cancel()
	err := s.exec(ectx, fmt.Sprintf("INSERT INTO %s (id, writer) VALUES (%d, '%s')", LoadTable, a.ID, a.Writer))
	if err != nil {
		a.Err = err.Error()
		s.close()
		return nil
	}
	a.OK = true
	return s
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Setup creates the tables through target, retrying until ctx ends.
func Setup(ctx context.Context, c *Client, target Target) error {
	stmts := []string{
		"CREATE TABLE IF NOT EXISTS " + LoadTable + " (id BIGINT PRIMARY KEY, writer VARCHAR(16) NOT NULL, " +
			"at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))",
		"CREATE TABLE IF NOT EXISTS " + ProbeTable + " (id BIGINT PRIMARY KEY, site VARCHAR(64) NOT NULL, " +
			"at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))",
	}
	return retry(ctx, func() error {
		addr, err := target.Addr(ctx)
		if err != nil {
			return err
		}
		s, err := c.open(ctx, addr)
		if err != nil {
			return err
		}
		defer s.close()
		for _, q := range stmts {
			if err := s.exec(ctx, q); err != nil {
				return fmt.Errorf("create tables: %w", err)
			}
		}
		return nil
	})
}

// ReadFinal reads back every id from base on through addr (the final primary).
func ReadFinal(ctx context.Context, c *Client, addr string, base int64, h *History) error {
	return retry(ctx, func() error {
		s, err := c.open(ctx, addr)
		if err != nil {
			return err
		}
		defer s.close()
		ids, err := s.queryColumn(ctx, fmt.Sprintf(
			"SELECT id FROM %s WHERE id >= %d UNION ALL SELECT id FROM %s WHERE id >= %d",
			LoadTable, base, ProbeTable, base))
		if err != nil {
			return err
		}
		h.Final, h.FinalSite, h.FinalRead = ids, s.site, true
		return nil
	})
}

// retry runs f every half second until it succeeds or ctx ends.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
