package sidecar

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStalledRecordWriteDoesNotHoldUpEscalation: while a write of the
// active record is stuck in the kernel (the state directory's disk
// stalls; holding activeMu stands for it), a lease fence whose SQL fence
// cannot complete (stuckDB: locks held) must still escalate and stop
// mysqld by the operator's lease deadline. fenceOnce and readDB end with
// syncActive, which must not wait for the stuck write.
func TestStalledRecordWriteDoesNotHoldUpEscalation(t *testing.T) {
	t.Run("no write stalled", func(t *testing.T) { escalatesWithRecordStalled(t, false) })
	t.Run("a record write stalled", func(t *testing.T) { escalatesWithRecordStalled(t, true) })
}

func escalatesWithRecordStalled(t *testing.T, stall bool) {
	const interval, lease = 500 * time.Millisecond, 1500 * time.Millisecond
	db := &stuckDB{writable: true}
	op := &hangingOperator{}
	srv := httptest.NewServer(op)
	defer srv.Close()
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL,
		StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Tick(ctx) // hears the operator: the view names iad, mysqld writable
	op.mu.Lock()
	op.frozen = true // cut off from now on
	op.mu.Unlock()
	if stall {
		r.activeMu.Lock() // a write of the record stuck on a stalled disk
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	time.Sleep(lease + 2*interval)
	r.mu.Lock()
	stop := r.esc.lastStop
	r.mu.Unlock()
	if stall {
		r.activeMu.Unlock()
	}
	cancel()
	<-done
	if stop == nil {
		db.mu.Lock()
		defer db.mu.Unlock()
		t.Fatalf("mysqld, writable and unfenceable, was not stopped within lease+2 intervals (stalled record write: %v; fences tried %d, shutdowns %d)",
			stall, db.fences, len(db.shutdowns))
	}
}

// TestRecordWriteBusyIsNotWaitedFor: syncActive finding activeMu held
// returns at once without writing, and the record follows what is wanted
// at the next call.
func TestRecordWriteBusyIsNotWaitedFor(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: TestKeys},
		OperatorURL: "http://127.0.0.1:1", StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		&pausedDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.mayActive = true
	r.mu.Unlock()
	r.activeMu.Lock()
	returned := make(chan struct{})
	go func() { defer close(returned); r.syncActive() }()
	select {
	case <-returned:
	case <-time.After(2 * time.Second):
		r.activeMu.Unlock()
		t.Fatal("syncActive waited for a write under way")
	}
	r.activeMu.Unlock()
	r.syncActive()
	if set, err := readActive(dir); err != nil || !set {
		t.Fatalf("record after the next call: set %v, %v", set, err)
	}
}

// TestStalledRecordWriteDoesNotHoldUpAView: while a write of the active
// record is stuck (holding activeMu stands for it), a view naming another
// site must be adopted at once: it is the one that fences this site, and
// the record guards only views naming this site.
func TestStalledRecordWriteDoesNotHoldUpAView(t *testing.T) {
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 1500 * time.Millisecond, PeerCheckInterval: 500 * time.Millisecond, Keys: TestKeys},
		OperatorURL: "http://127.0.0.1:1", StateDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, &stuckDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.activeMu.Lock() // a write of the record stuck on a stalled disk
	defer r.activeMu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep := Reply{Kind: ReplyView}
		rep.View.ActiveSite = "pdx"
		r.recordFirst(&rep)()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("a view naming another site waited for a stalled write of the active record")
	}
}
