package grouploop

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// evidenceSince is the moment fence evidence about site must postdate: the
// start of its current run of failed probes or, when status records it
// maybe-writable, the moment this operator first saw that mark, whichever
// is later. Evidence from before an operation that may have made the site
// writable says nothing about it. Both times are this operator's own.
func (l *Loop) evidenceSince(g *v1alpha1.MysqlFailoverGroup, site string) time.Time {
	since := l.failingSince(site)
	if !failover.MaybeWritable(&g.Status, site) {
		delete(l.maybeSince, site)
		return since
	}
	at, ok := l.maybeSince[site]
	if !ok {
		at = l.env.Clock.Now()
		l.maybeSince[site] = at
	}
	if since.IsZero() || at.After(since) {
		return at
	}
	return since
}
