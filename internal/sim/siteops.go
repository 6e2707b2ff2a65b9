package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// SiteStatus is one round trip to a site: its sidecar's report and, when
// mysqld is up, what SHOW REPLICA STATUS, @@read_only and @@gtid_executed say.
type SiteStatus struct {
	Site              string
	SidecarGeneration int64
	MySQLUp           bool
	ReadOnly          bool
	ServerUUID        string
	Executed          gtid.Set
	Received          gtid.Set // executed plus the relay log
	Source            string   // replication source, "" when none
	Replicating       bool     // IO thread connected and SQL thread running
	Lag               time.Duration
}

// SiteOps are the domain verbs the operator and the sequencers run against
// sites: the sim's stand-in for pkg/mysql reached through the network. Every
// verb fails with ErrUnreachable when the site cannot be reached, and with
// ErrMySQLDown when its sidecar answers but its mysqld is down (Status then
// still returns the sidecar's part).
type SiteOps interface {
	Status(site string) (SiteStatus, error)
	Fence(site string) error   // super_read_only=ON, kill application connections
	Unfence(site string) error // read_only=OFF: the only way a site becomes writable
	ReplicateFrom(site, source string) error
	StopReplica(site string) error // STOP REPLICA; RESET REPLICA ALL
}

// netOps is SiteOps as seen from the operator's node.
type netOps struct{ w *World }

func (o netOps) reach(name string) (*site, error) {
	s, ok := o.w.siteByName(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("site %q: %w", name, ErrUnknownSite)
	case !s.pod || s.mysqldPaused(o.w.step) || !o.w.net.delivers(o.w.operatorNode(), s.idx, o.w.step):
		return s, fmt.Errorf("site %s: %w", name, ErrUnreachable)
	case !s.db.up:
		return s, fmt.Errorf("site %s: %w", name, ErrMySQLDown)
	}
	return s, nil
}

func (o netOps) Status(name string) (SiteStatus, error) {
	s, err := o.reach(name)
	if err != nil && !errors.Is(err, ErrMySQLDown) {
		return SiteStatus{Site: name}, err
	}
	st := SiteStatus{Site: name, SidecarGeneration: s.sidecar.View().Generation}
	if err != nil {
		return st, err
	}
	received := s.db.executed.clone()
	received.raise(s.db.received)
	st.MySQLUp, st.ReadOnly, st.ServerUUID = true, s.db.readOnly, s.uuid
	st.Executed, st.Received = s.db.executed.set(o.w.uuids), received.set(o.w.uuids)
	st.Lag = time.Duration(s.db.executed.behind(received)) * time.Second
	if s.db.source >= 0 {
		src := o.w.sites[s.db.source]
		st.Source = src.name
		st.Replicating = s.db.replicating && src.pod && src.db.up && o.w.net.connected(s.idx, src.idx, o.w.step)
	}
	return st, nil
}

func (o netOps) Fence(name string) error {
	s, err := o.reach(name)
	if err != nil {
		return err
	}
	if !s.db.readOnly {
		s.db.readOnly = true
		o.w.logf("operator fenced %s (SQL)", name)
	}
	return nil
}

func (o netOps) Unfence(name string) error {
	s, err := o.reach(name)
	if err != nil {
		return err
	}
	if s.db.readOnly {
		o.w.logf("operator unfenced %s", name)
		o.w.unfence(s)
	}
	return nil
}

func (o netOps) ReplicateFrom(name, source string) error {
	s, err := o.reach(name)
	if err != nil {
		return err
	}
	src, ok := o.w.siteByName(source)
	if !ok {
		return fmt.Errorf("source %q: %w", source, ErrUnknownSite)
	}
	s.db.source, s.db.replicating, s.db.received = src.idx, true, s.db.executed.clone()
	o.w.logf("operator pointed %s at %s", name, source)
	return nil
}

func (o netOps) StopReplica(name string) error {
	s, err := o.reach(name)
	if err != nil {
		return err
	}
	s.db.source, s.db.replicating, s.db.received = -1, false, s.db.executed.clone()
	return nil
}
