package authority

import "k8s.io/apimachinery/pkg/types"

// Every step that makes a site writable waits, bounded by AdoptionWait, for
// that site's sidecar to hold the generation naming it (a planned or
// emergency promotion, a re-assertion): a sidecar still holding the older
// view would fence the site right back. The operator nudges the sidecars
// when it publishes a generation, and the sidecar fetches the view within
// milliseconds; but the loop that waits only looked again at its next
// pass, a poll (50 ms for a planned failover, the poll interval for an
// emergency) and a whole observation later. So the Registry tells the loop
// the moment it serves a sidecar a generation higher than one served to it
// before, and the loop passes again at once. The wait and its rule stay as
// they were: the wake only makes the loop look sooner.
//
// The first view served to a sidecar after this process started wakes
// nothing: no step waits for it, and every extra pass is one more probe of
// every site, which counts toward failureThreshold. A sidecar causes at
// most one wake per generation.

// NotifyOnAdoption makes the Registry call f with the group whenever it
// serves one of the group's sidecars a higher generation than one it served
// that sidecar before. f is called after the Registry's lock is released,
// on the serving goroutine, and must not block.
func (r *Registry) NotifyOnAdoption(f func(types.NamespacedName)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onAdopt = f
}
