//go:build envtest

package controller_test

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// lingerOn keeps an application session open on site, as a client that
// still resolves the old primary would: each time it is killed it
// reconnects within milliseconds. While it runs, every round of a planned
// failover's drain finds a session to kill, so Draining stays in its second
// step (fenced, draining) instead of leaving it in the fence's own pass.
// The returned func stops it and waits.
func (e *env) lingerOn(site string) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			db, err := sql.Open("mysql", e.db.AppDSN(e.index(site)))
			if err == nil {
				db.SetMaxOpenConns(1)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, _ = db.ExecContext(ctx, "DO SLEEP(0.5)")
				cancel()
				_ = db.Close()
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	var once sync.Once
	done := func() { once.Do(func() { close(stop); wg.Wait() }) }
	e.t.Cleanup(done)
	return done
}
