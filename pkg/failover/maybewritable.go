package failover

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// An operation that makes a site writable (DB.Promote, PlannedDB.Unfence)
// and fails or times out may still have taken effect: the statement may
// have run after the client gave up, or be running still. Until the site
// is fenced again, it may write whatever its probes said before. The fact is
// persisted in status.sites[].maybeWritable, so that a restarted operator
// knows it too, and topology.SiteView.MaybeWritable carries it to Decide,
// which fences such a site before it makes any other site writable.

// MaybeWritable reports whether status records that site may have been made
// writable by an operation whose outcome is unknown.
func MaybeWritable(st *v1alpha1.MysqlFailoverGroupStatus, site string) bool {
	return SiteStatusOf(st, site).MaybeWritable
}

// MarkMaybeWritable records that an operation making site writable failed
// with err, and returns the Event message saying so. The caller persists
// status before anything else runs.
func MarkMaybeWritable(st *v1alpha1.MysqlFailoverGroupStatus, site string, err error) string {
	rec := SiteRecord(st, site)
	rec.MaybeWritable, rec.Fenced = true, false
	return fmt.Sprintf("making %s writable failed and may have taken effect (%v): no other site is made "+
		"writable until %s is fenced or confirmed unable to write", site, err, site)
}

// RecordFenced records that site was just fenced by SQL: it is held
// read-only, and whatever an earlier operation may have done is undone.
func RecordFenced(st *v1alpha1.MysqlFailoverGroupStatus, site string) {
	rec := SiteRecord(st, site)
	rec.Fenced, rec.MaybeWritable = true, false
}

// RecordWritable records that site was made writable, or observed writable
// as the active site: its state is known again.
func RecordWritable(st *v1alpha1.MysqlFailoverGroupStatus, site string) {
	rec := SiteRecord(st, site)
	rec.Fenced, rec.MaybeWritable = false, false
}
