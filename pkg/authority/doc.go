// Package authority decides whom the operator believes and what it serves:
// the views it publishes to the sidecars, the sidecar reports it accepts as
// evidence, and whether this process may act at all. It imports neither the
// per-group poll loop (pkg/grouploop) nor the reconciler (pkg/controller);
// both use it.
//
// The Registry (registry.go) holds, in memory only, the view each group's
// loop published and what every site's sidecar reported through
// /active-site. It is the evidence topology.ConfirmFence reads. A report
// counts as fence evidence only when it echoes a view this process served
// at or after the failure was first seen, by the views' sequence numbers
// rather than any clock (registry_seq.go, topology.Report.ObservedAfter).
// The Registry ends a run of reports when the sidecar process may have
// changed: a new boot id, or a Pod listing that differs from the previous
// one (a new Pod UID, or a sidecar restart count or start that changed).
// When it serves a sidecar a higher generation than one it served that
// sidecar before, it tells the loop that waits for it (adoptwake.go).
//
// The /active-site API (api.go, api_refuse.go) serves views only on the
// elected leader and only views its loops published, each signed by the key
// ViewKeys (viewkeys.go) keeps in a Secret of the operator's namespace;
// ViewKeys also publishes the accepted public keys to every group namespace.
// Reports carry bounded generations (topology.MaxGeneration,
// generation_bounds.go); a malformed report, or an echo of a view never
// served, is refused and counted. ReportAuth (auth.go) requires a site's
// own certificate for its reports once the group has switched to
// authenticated reports; CARefresher (carefresh.go) hands a rotated CA to
// the Keeper that the API and the nudges trust.
//
// When the view the Registry publishes for a group changes, the Nudger
// (nudge.go) sends POST /peer/refresh to every site's sidecar in the
// background, so they fetch the new view now rather than at their next
// tick. It carries no data and never holds up the loop; the wait for the
// target's sidecar before promotion stays the safety check. SidecarURL maps
// a site to the sidecar it nudges (default: the site Service's sidecar port).
//
// Leadership (leadership.go) tells whether this process holds the
// leader-election lock now; the loop asks it before every step that makes a
// site writable, and a process that does not hold it serves no view either.
package authority
