package failover

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrNoTarget means a failover was asked for without a target site.
	ErrNoTarget = errors.New("failover: no target site")
	// ErrUnknownSite means a site named by the intent or decision is not in the spec.
	ErrUnknownSite = errors.New("failover: unknown site")
	// ErrUnknownStep means status.failover.step is not one of the steps.
	ErrUnknownStep = errors.New("failover: unknown step")
	// ErrPersist means a status write failed; the step is retried on the next pass.
	ErrPersist = errors.New("failover: persist status")
	// ErrPromote means the target could not be made writable.
	ErrPromote = errors.New("failover: promote")
	// ErrRoute means role labels, Services or DNS could not be moved.
	ErrRoute = errors.New("failover: route")
	// ErrMayNotMakeWritable means no site may be made writable on this
	// pass: its snapshot is too old (the operator was paused) or the
	// operator does not hold leadership now. The next pass observes again.
	ErrMayNotMakeWritable = errors.New("failover: may not make a site writable now")
	// ErrSidecarSilent comes with ErrMayNotMakeWritable when the site's
	// sidecar has not asked the operator lately: nothing would enforce the
	// lease of the site made writable (topology.SidecarAsking).
	ErrSidecarSilent = errors.New("failover: the site's sidecar is silent")
	// ErrClaim means the maybe-writable mark could not be persisted, with
	// the optimistic lock, before a statement making a site writable: another
	// writer changed the group since the pass read it (or the write failed),
	// so the statement did not run. The next pass reads and decides again.
	ErrClaim = errors.New("failover: could not claim the site before making it writable")
	// ErrSalvageSourceWritable: a salvage was not started because the old
	// primary was not fenced when read right before (DB.Salvage).
	ErrSalvageSourceWritable = errors.New("failover: salvage source is not fenced")
	// ErrSalvageTargetWritable: DB.Salvage found its target writable and
	// left it as it was (it may be a primary another operator promoted).
	ErrSalvageTargetWritable = errors.New("failover: salvage target is not read-only")
	// ErrSalvageTargetMoved: DB.Salvage found its target changed since it
	// was read (another executed set, or another replication source: a
	// promotion since) and left it as it was.
	ErrSalvageTargetMoved = errors.New("failover: salvage target changed since it was read")
	// ErrLeaseFence means the site's mysqld's lease fence could not be
	// armed (or its sidecar's last ask leaves too little of its lease to
	// arm it for) before a step that would make the site writable; the
	// step did not run. The next pass tries again.
	ErrLeaseFence = errors.New("failover: cannot arm the site's lease fence")
	// ErrWritesHeld is what DB.ArmLeaseFence returns when the arm waited
	// out its lock wait on a global read lock (the site's sidecar's write
	// hold): no write commits there while it holds, and the sidecar that
	// releases it, on seeing the site writable, arms the fence itself. The
	// step goes on.
	ErrWritesHeld = errors.New("failover: the site's writes are held")
	// ErrSemiSync means the site about to be made writable could not be
	// made the semi-sync source (semisync.go); with dataDurability
	// required the step did not run, and the next pass tries again.
	ErrSemiSync = errors.New("failover: cannot make the site the semi-sync source")
	// ErrUnfenceRefused is what PlannedDB.Unfence returns when the server
	// refused the unfence before changing anything (it replicates, or
	// another step holds its topology lock): the site stayed read-only, so
	// the claim is withdrawn rather than left maybe-writable.
	ErrUnfenceRefused = errors.New("failover: unfence refused, the site is unchanged")
)

// ErrDrainPending is what DB.DrainRelayLog returns when the relay log is not
// applied yet; the sequence retries until its drain budget runs out.
var ErrDrainPending = errors.New("failover: relay log not drained yet")

// Planned failover.
var (
	// ErrInvalidRequest means the planned-failover annotation's value does not parse.
	ErrInvalidRequest = errors.New("failover: invalid planned-failover request")
	// ErrLagPending is what PlannedDB.WaitForGTID returns when the site has
	// not applied the set yet; the planned failover waits on.
	ErrLagPending = errors.New("failover: target has not caught up yet")
	// ErrNotReplicating means a planned failover's target does not receive
	// its source's transactions.
	ErrNotReplicating = errors.New("failover: not replicating")
	// ErrPlannedBusy means the ordered update asked for a switchover while
	// a planned failover is already asked for or in flight.
	ErrPlannedBusy = errors.New("failover: a planned failover is already asked for or in flight")
	// ErrUnknownPhase means status.plannedFailover holds a phase this operator does not know.
	ErrUnknownPhase = errors.New("failover: unknown planned-failover phase")
)
