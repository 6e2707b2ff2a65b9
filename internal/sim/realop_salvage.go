package sim

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// SalvageFrom implements mysql.Instance as replication with an UNTIL
// condition would do it, at once (logical time does not pass during a
// call): the site, kept read-only, receives the source's binlog when its
// Pod and mysqld are up and the link between the two streams, applies it
// in commit order until it has reached until (WaitForGTID's test), and
// stops replicating from it. Without a stream it receives nothing and the
// wait times out. The sim does not check that the source is fenced: the
// operator's conns.Salvage reads it first (Status), as with a real server.
func (i simInstance) SalvageFrom(_ context.Context, source mysql.Endpoint, _ mysql.Credentials, until, _ gtid.Set,
	_ *mysql.SemiSyncSettings) (gtid.Set, error) {
	s, err := i.reach()
	if err != nil {
		return gtid.Set{}, i.replied(err)
	}
	src, ok := i.w.siteByName(source.Host)
	if !ok {
		return gtid.Set{}, fmt.Errorf("salvage %s from %s: %w", i.name, source.Host, ErrUnknownSite)
	}
	w := i.w
	s.db.readOnly = true
	s.db.source, s.db.replicating, s.db.received = src.idx, false, s.db.executed.clone()
	if src.pod && src.db.up && !src.mysqldPaused(w.step) && w.net.stream(s.idx, src.idx, w.step) {
		before := s.db.received.clone()
		s.db.received.raise(src.db.executed)
		w.noteReceived(s, src, before)
		for !i.reached(s, until) && w.applyNext(&s.db) {
		}
		w.logf("operator salvaged %s from %s: %s", i.name, src.name, s.db.executed)
	}
	s.db.received = s.db.executed.clone() // stopped: the rest of the relay log is never applied
	set := i.executed(s)
	if !i.reached(s, until) {
		return set, i.replied(fmt.Errorf("salvage %s from %s: %w", i.name, src.name, mysql.ErrTimeout))
	}
	return set, i.replied(nil)
}
