package topology

import (
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// A promotion target ranked on what its IO thread received (Holdings) must
// apply its relay log first. When the drain runs out of its timeout the
// target may be short of that set for two different reasons, and they call
// for opposite answers:
//
//   - its applier is slow (a big transaction): the relay log still holds
//     what it received, the SQL thread runs and its executed set advances.
//     Waiting on is what keeps those transactions, which under semi-sync it
//     alone may have acknowledged.
//   - its relay log is gone (mysqld restarted, or replication was reset):
//     its received set shrank, or its mysqld started later than the probe
//     that ranked it showed (SiteView.Replication.Started, RelayRead.Uptime),
//     or its uptime went back between reads. A restarted MySQL replica
//     with relay_log_recovery discards its relay log, and a MariaDB one
//     may come back with the same Gtid_IO_Pos yet a relay log that no
//     longer holds what it stood for. Waiting brings nothing back; it is
//     ranked again on what it executed.
//
// JudgeDrain tells them apart from reads taken after the drain timeout.
// The wait is bounded twice: by progress (the executed set, or the
// applier's open transaction, must advance within DrainBounds.Progress)
// and overall (DrainBounds.Overall from the first read). A single
// transaction that applies for longer than the progress bound commits
// nothing meanwhile, yet it is no stall: the rows it modified grow
// (RelayRead.ApplierRows), and that counts as progress. A drain that stalls, or outlives the bound, is given up:
// what the target received and did not apply is then lost, and the caller
// must record it (DrainedShort) rather than let the reset drop it silently.

// RelayRead is a replica's replication as read after its drain ran out.
type RelayRead struct {
	// Executed is its executed GTID set.
	Executed gtid.Set
	// Retrieved is what its IO thread holds received now (empty when no
	// replication is configured any more).
	Retrieved gtid.Set
	// Applying is true when its SQL thread runs without an error.
	Applying bool
	// Uptime is how long its mysqld has run; zero when unknown.
	Uptime time.Duration
	// ApplierTrx names the applier's open transactions (empty: none, or
	// unknown) and ApplierRows the rows they modified so far: a long
	// transaction advances them while the executed set stands still.
	ApplierTrx  string
	ApplierRows int64
}

// DrainWatch is what the earlier reads of one slow drain showed; the zero
// value is a watch not begun.
type DrainWatch struct {
	// Start is the first read's time; Progress the last read at which the
	// executed set had advanced (Start at first).
	Start, Progress time.Time
	// Last is the last read.
	Last RelayRead
}

// DrainBounds bound the wait for a slow applier past the drain timeout.
type DrainBounds struct {
	// Progress is how long the executed set may stand still.
	Progress time.Duration
	// Overall is how long the wait may last in all.
	Overall time.Duration
}

// DrainVerdict is JudgeDrain's answer.
type DrainVerdict int

const (
	// DrainHolds: the target holds what it was ranked on; promote it.
	DrainHolds DrainVerdict = iota
	// DrainSlow: its relay log holds the rest and its applier applies it;
	// wait for it.
	DrainSlow
	// DrainRelayGone: its relay log no longer holds what it received; rank
	// it again on what it executed.
	DrainRelayGone
	// DrainStalled: its relay log is there but it does not apply it within
	// the bounds; give the rest up, recorded as lost.
	DrainStalled
)

// JudgeDrain judges target, as the pass ranked it, from a read (now) taken
// at at after its drain timeout, and returns the watch to pass next time.
func JudgeDrain(target SiteView, w DrainWatch, now RelayRead, at time.Time, b DrainBounds) (DrainVerdict, DrainWatch) {
	if DrainedShort(target, now.Executed).IsEmpty() {
		return DrainHolds, DrainWatch{}
	}
	first := w.Start.IsZero()
	if first {
		w = DrainWatch{Start: at, Progress: at, Last: now}
	}
	if relayGone(target, w.Last, now, at) {
		return DrainRelayGone, DrainWatch{}
	}
	if !first && (!gtid.Lacks(w.Last.Executed, now.Executed).IsEmpty() || applierAdvanced(w.Last, now)) {
		w.Progress = at
	}
	w.Last = now
	if now.Applying && at.Sub(w.Progress) < b.Progress && at.Sub(w.Start) < b.Overall {
		return DrainSlow, w
	}
	return DrainStalled, DrainWatch{}
}

// restartSlack is how much later than the probe showed a read may place
// mysqld's start before it counts as a restart: Uptime is whole seconds,
// and each start is reckoned from the time its reply was taken.
const restartSlack = 5 * time.Second

// applierAdvanced reports whether the applier worked on between two reads
// without committing: the same open transactions modified more rows, or it
// has other ones open now (one committed, or was retried). Bounded like
// any progress: by DrainBounds.Overall.
func applierAdvanced(last, now RelayRead) bool {
	if now.ApplierTrx == "" {
		return false
	}
	if now.ApplierTrx != last.ApplierTrx {
		return true
	}
	return now.ApplierRows > last.ApplierRows
}

// RestartedSince reports whether a mysqld that started at started (as an
// earlier read reckoned it; zero when unknown) has restarted since: read at
// at, its uptime places its start later, beyond restartSlack. An unknown
// uptime (zero) says nothing.
func RestartedSince(started time.Time, uptime time.Duration, at time.Time) bool {
	return !started.IsZero() && uptime > 0 && at.Add(-uptime).After(started.Add(restartSlack))
}

// relayGone reports evidence that the relay log target was ranked on is
// gone: what its IO thread holds received shrank, since the probe or the
// last read, or its mysqld restarted since the probe (its start, read at
// at, is later than the probe's) or since the last read (its uptime went
// back). LacksPart: a received set is a piece of a history (MariaDB's
// Gtid_IO_Pos).
func relayGone(target SiteView, last, now RelayRead, at time.Time) bool {
	if r := target.Replication.Retrieved; !r.IsEmpty() && !gtid.LacksPart(now.Retrieved, r).IsEmpty() {
		return true
	}
	if !gtid.LacksPart(now.Retrieved, last.Retrieved).IsEmpty() {
		return true
	}
	if RestartedSince(target.Replication.Started, now.Uptime, at) {
		return true
	}
	return now.Uptime > 0 && last.Uptime > 0 && now.Uptime < last.Uptime
}
