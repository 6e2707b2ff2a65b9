package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{17, "long-rollback-fence", "a cut-off primary is inside a large UPDATE when its lease runs out: no new session commits on it once the other site is promoted", longRollbackFence})
}

// The long transaction's table: bigRows rows, updated whole bigPasses times
// in one transaction, so that the fence meets a long statement and then a
// long rollback.
const (
	bigTable  = "playground_big"
	bigRows   = 300000
	bigPasses = 10
)

func longRollbackFence(ctx context.Context, e *Env) Result {
	return play(ctx, e, "long-rollback-fence", Plan{Load: LoadOptions{FreshProbes: true}}, fenceDuringRollback)
}

// fenceDuringRollback fills a table of bigRows rows, waits until site-b has
// it, starts a transaction on site-a that updates the whole table bigPasses
// times, and cuts site-a off from the operator and site-b (clients still
// reach it) three seconds later. Its lease runs out inside that transaction: the fence
// waits on its locks, kills it, and waits on its rollback. The prober opens
// a new application session for every probe. Once site-b takes writes, no
// session may commit on site-a any more.
func fenceDuringRollback(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	addrs := g.SiteAddrs()
	big := g.client(l.acct, 3*time.Minute)
	if err := fillBig(ctx, big, addrs[a], addrs[b], r); err != nil {
		return err
	}
	// The transaction starts a little before the cut, so that by the time
	// the lease runs out it has a long rollback to do.
	began := l.Mark("large-transaction")
	txDone := make(chan string, 1)
	go func() { txDone <- bigTransaction(ctx, big, addrs[a], began) }()
	if err := sleepCtx(ctx, 3*time.Second); err != nil {
		return err
	}
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	if err := g.WaitActive(ctx, b, 2, 3*time.Minute); err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, b, false, cut, 30*time.Second); err != nil {
		return err
	}
	// Long enough for a rollback to end and for the prober to try again and again.
	if err := sleepCtx(ctx, 10*time.Second); err != nil {
		return err
	}
	select {
	case s := <-txDone:
		r.Notef("the large transaction on %s %s", a, s)
	default:
		r.Notef("the large transaction on %s is still running or rolling back", a)
	}
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", 2*time.Minute, lossReported)
	if err != nil {
		return err
	}
	r.finish(ctx, l, *mg.Status.LastFailover.TransactionsLost)
	judgeAfterPromotion(&l.hist, r, a, b, cut)
	return nil
}

// fillBig makes the table on the primary and waits until the replica has it.
func fillBig(ctx context.Context, c *load.Client, primary, replica string, r *Result) error {
	start := time.Now()
	err := c.Exec(ctx, primary, "CREATE TABLE IF NOT EXISTS "+bigTable+" (id INT PRIMARY KEY, v BIGINT NOT NULL)",
		fmt.Sprintf("INSERT INTO %s SELECT seq, 0 FROM seq_1_to_%d", bigTable, bigRows))
	if err != nil {
		return fmt.Errorf("fill %s: %w", bigTable, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := c.QueryInt(ctx, replica, "SELECT COUNT(*) FROM "+bigTable)
		if err == nil && n == bigRows {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica has %d of %d rows of %s (%v)", n, bigRows, bigTable, err)
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	r.Notef("%d rows in %s on both sites in %.1fs", bigRows, bigTable, time.Since(start).Seconds())
	return nil
}

// bigTransaction updates the whole table bigPasses times in one transaction
// and rolls it back; it says how that ended, relative to its start.
func bigTransaction(ctx context.Context, c *load.Client, addr string, began time.Time) string {
	stmts := []string{"BEGIN"}
	for range bigPasses {
		stmts = append(stmts, "UPDATE "+bigTable+" SET v = v + 1")
	}
	stmts = append(stmts, "ROLLBACK")
	err := c.Exec(ctx, addr, stmts...)
	at := time.Since(began).Seconds()
	if err != nil {
		return fmt.Sprintf("ended %.1fs after it began: %s", at, strings.TrimSpace(err.Error()))
	}
	return fmt.Sprintf("ran all %d passes and rolled back by itself %.1fs after it began: the fence never stopped it", bigPasses, at)
}

// judgeAfterPromotion fails every write the old primary acknowledged once
// the new one had taken one.
func judgeAfterPromotion(h *load.History, r *Result, old, cur string, cut time.Time) {
	first, ok := firstAckOn(h, cur, cut)
	if !ok {
		r.Failf("%s took no write after the cut", cur)
		return
	}
	n := 0
	var last load.Attempt
	for _, x := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if x.OK && x.Site == old && x.End.After(first.Start) {
			n++
			if x.End.After(last.End) {
				last = x
			}
		}
	}
	if oldLast, ok := lastAckOn(h, old); ok {
		r.Notef("%s's last acknowledged write %.2fs after the cut; %s's first %.2fs after it", old,
			oldLast.End.Sub(cut).Seconds(), cur, first.End.Sub(cut).Seconds())
	}
	if n > 0 {
		r.Broken++
		r.Failf("%s committed %d writes after %s took writes, the last %.2fs later (id %d, %s): its fence did not "+
			"complete while the large transaction held it back", old, n, cur, last.End.Sub(first.Start).Seconds(), last.ID, last.Writer)
	}
}
