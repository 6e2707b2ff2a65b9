package authority

// Every view this process serves carries a sequence number, Seq: 1, 2, ...
// from a counter, never from a clock. A sidecar echoes the Seq of the last
// view it heard from the operator in the reports it sends after, so a report
// describes a mysqld read made after this process served that view. The
// poll loop marks the moment it first sees a site fail by SeqMark, and a
// report is evidence only if it echoes this process's id and a Seq at or
// above the mark (topology.Report.ObservedAfter). A wall clock that steps
// back (NTP, a resumed VM) cannot make a view served before the failure look
// served after it, as a comparison of observedAt times could.

// SeqMark is the Seq of the next view this process will serve: every view
// served from now on has a Seq at or above it, every view served before
// one below it.
func (r *Registry) SeqMark() int64 { return r.seq.Load() + 1 }

// Served reports whether this process has served a view numbered seq: an
// echo of a higher Seq under its id is forged.
func (r *Registry) Served(seq int64) bool { return seq >= 1 && seq <= r.seq.Load() }
