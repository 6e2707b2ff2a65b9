// Package sidecar owns the process that runs next to every mysqld: its cached
// view of the active site, the gossip of that view with the other sites'
// sidecars, and self-fencing.
//
// The decision is Loop, a state machine with no clock, no I/O and no
// goroutines: its owner calls Tick once per peerCheckInterval with an
// Observation (the local mysqld's state and the answers of the operator's GET
// /active-site and of each peer's GET /peer/active-site) and acts on the
// Decision. Its rules:
//   - Adopt a view with a higher generation; between equal generations, the
//     later observedAt (v1alpha1.ActiveSiteView.Newer).
//   - Every valid view heard, from the operator or a peer, renews the lease.
//     Before any, the lease runs from boot. A peer with no view (503), an
//     older peer (404) and ignored answers renew nothing.
//   - A writable mysqld is fenced when the view names another site, while
//     the operator has not answered since boot (the boot safety net: peers do
//     not lift it), and when the lease has run out. A read-only or stopped
//     mysqld needs nothing. The sidecar never unfences: only the operator
//     makes a site writable.
//   - A view counts only when its signature verifies with an accepted key
//     (Settings.Keys) and its generation is not below the one held or the
//     floor an earlier process kept. A malformed, foreign, unsigned, forged
//     or older answer is ignored, renews nothing, and is listed in the
//     Decision to be logged and counted (RejectReason).
//   - During the gather the owner may Offer each answer as it arrives: a
//     newer valid view is adopted at once, and fences a writable mysqld when
//     it names another site, without waiting for slower requests. Tick hears
//     it again as a no-op.
//
// Runner is the thin I/O shell around a Loop: it reads mysqld through the
// MySQL interface (pkg/mysql's Instance), fetches every view in parallel with
// per-request timeouts shorter than the period, offers each answer to the
// Loop as it arrives (from the ticking goroutine), fences, keeps the state that
// /status reports, and exports Prometheus metrics on its own registry.
// Handler serves /healthz, /readyz, /peer/active-site (503 before any view,
// and before the operator answered this process; the view relayed exactly as
// the operator signed it),
// /status and /metrics with chi, and POST /peer/refresh, which makes Run tick
// early (coalesced and rate-limited by a clock-free schedule; refresh.go).
//
// Run is a Stepper (Start, then Next and Fire) driven by the Clock's timer.
// internal/sim steps the same Runner on its logical time, over its own
// Config.Clock, Config.Gatherer (its network instead of HTTP) and
// Config.ProcessProbe (its mysqld processes instead of Process).
//
// The instance lifecycle: Terminate stops mysqld when the Pod terminates
// (the SIGTERM, or the preStop hook's GET /lifecycle/stop): fence first,
// let application sessions finish for half of Config.StopDelay, kill the
// rest, SHUTDOWN, SIGKILL at the margin. StopPlan decides each step, pure,
// time passed in (stopplan.go; terminate.go acts). GET /healthz/live is
// mysqld's liveness, read by SQL with a timeout and decided by Liveness;
// /readyz also needs the application login (probes.go).
package sidecar
