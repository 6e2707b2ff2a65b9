package sim

import "fmt"

// netOps are the domain verbs simInstance (realop_db.go) runs against a
// site's mysqld, as seen from the operator's node. Every verb fails with
// ErrUnreachable when the site cannot be reached, and with ErrMySQLDown
// when its Pod runs but its mysqld is down.
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
