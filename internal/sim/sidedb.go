package sim

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// sideDB is a site's mysqld as its sidecar reaches it, over the Pod's
// socket: no network between them. A down mysqld refuses the connection;
// a frozen one lets every call time out. The verbs act on the world at
// once, and the fence faults act on the sidecar's fence as on the
// operator's (fence.go).
type sideDB struct {
	w *World
	s *site
}

// local is the outcome of connecting to the site's mysqld.
func (d sideDB) local() error {
	switch {
	case !d.s.pod || !d.s.db.up:
		return fmt.Errorf("%s: dial unix mysqld.sock: %w", d.s.name, syscall.ECONNREFUSED)
	case d.s.mysqldPaused(d.w.step):
		return fmt.Errorf("%s: %w", d.s.name, context.DeadlineExceeded)
	}
	return nil
}

// Status implements sidecar.MySQL.
func (d sideDB) Status(context.Context) (mysql.Status, error) {
	if err := d.local(); err != nil {
		return mysql.Status{}, err
	}
	if d.s.readWindow {
		// The first read after a freeze: the clients that woke with the
		// process write while it waits for the answer (thaw).
		d.s.readWindow = false
		d.w.clientWrite(d.s)
	}
	return d.w.statusOf(d.s), nil
}

// Fence implements sidecar.MySQL: read-only, unless a fence fault makes it
// fail or time out (and land later).
func (d sideDB) Fence(context.Context) error {
	if err := d.local(); err != nil {
		return err
	}
	if err := d.w.faultyFence(d.s, ""); err != nil {
		return err
	}
	d.s.db.readOnly = true
	return nil
}

// Shutdown implements the sidecar's SQL SHUTDOWN: mysqld stops, and the
// kubelet starts it again, fenced.
func (d sideDB) Shutdown(context.Context) error {
	if err := d.local(); err != nil {
		return err
	}
	d.w.stopMySQL(d.s)
	return nil
}

// HoldWrites implements the sidecar's write hold: the global read lock on
// a connection of its own. While it holds, no client write commits and the
// SQL thread applies nothing; it dies with the mysqld process.
func (d sideDB) HoldWrites(context.Context) (mysql.WriteHold, error) {
	if err := d.local(); err != nil {
		return nil, err
	}
	h := &simHold{w: d.w, s: d.s, boot: d.s.dbBoots}
	d.s.db.hold = h
	d.s.sidecar.note(sideLog{msg: logHold})
	return h, nil
}

// ArmLeaseFence implements the sidecar's arm of mysqld's lease fence: the
// event fires at the latest a second after its whole seconds are up, on
// the site's own wall clock. Its DDL waits behind a write hold.
func (d sideDB) ArmLeaseFence(_ context.Context, after time.Duration) error {
	if err := d.local(); err != nil {
		return err
	}
	return d.w.armLeaseFence(d.s, after)
}

// armLeaseFence arms s's lease fence for after, as either the sidecar or
// the operator asks: refused under a global read lock (pkg/mysql proves
// the hold and says ErrWritesHeld) or when too short.
func (w *World) armLeaseFence(s *site, after time.Duration) error {
	if s.db.hold != nil {
		return fmt.Errorf("arm %s's lease fence: %w", s.name, mysql.ErrWritesHeld)
	}
	if after < time.Second {
		return fmt.Errorf("arm %s's lease fence for %s: %w", s.name, after, mysql.ErrLeaseFenceUnavailable)
	}
	s.leaseFenceAt = w.clockOf(s).Add(after.Truncate(time.Second) + time.Second)
	return nil
}

// simHold is a write hold in a site's mysqld.
type simHold struct {
	w    *World
	s    *site
	boot int
}

// gone reports whether the hold's connection, and its lock, are gone.
func (h *simHold) gone() bool {
	return h.s.db.hold != h || !h.s.pod || !h.s.db.up || h.s.dbBoots != h.boot
}

// Alive implements mysql.WriteHold.
func (h *simHold) Alive(context.Context) error {
	switch {
	case h.gone():
		return fmt.Errorf("%s: write hold: connection lost: %w", h.s.name, mysql.ErrTimeout)
	case h.s.mysqldPaused(h.w.step):
		return fmt.Errorf("%s: write hold: %w", h.s.name, context.DeadlineExceeded)
	}
	return nil
}

// Release implements mysql.WriteHold.
func (h *simHold) Release() {
	if h.s.db.hold == h {
		h.s.db.hold = nil
		h.s.sidecar.note(sideLog{msg: logRelease})
	}
}

// simProcess is the evidence of a site's mysqld process, as the sidecar
// sees it through the Pod's shared process namespace: a pid per start of
// mysqld, and its TCP port, open while it runs (a frozen process's too:
// the kernel accepts for it). SIGKILL stops a frozen process as well.
type simProcess struct {
	w *World
	s *site
}

// HasPID implements sidecar.ProcessProbe.
func (simProcess) HasPID() bool { return true }

// HasTCP implements sidecar.ProcessProbe.
func (simProcess) HasTCP() bool { return true }

// LivePID implements sidecar.ProcessProbe.
func (p simProcess) LivePID() int {
	if !p.s.pod || !p.s.db.up {
		return 0
	}
	return 100 + p.s.dbBoots
}

// DialTCP implements sidecar.ProcessProbe.
func (p simProcess) DialTCP(context.Context) sidecar.TCPState {
	if p.LivePID() == 0 {
		return sidecar.TCPRefused
	}
	return sidecar.TCPOpen
}

// Kill implements sidecar.ProcessProbe.
func (p simProcess) Kill() (int, error) {
	pid := p.LivePID()
	if pid == 0 {
		return 0, fmt.Errorf("%s: %w", p.s.name, sidecar.ErrNoProcess)
	}
	p.w.stopMySQL(p.s)
	return pid, nil
}
