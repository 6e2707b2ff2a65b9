package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/grouploop"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// simPort is the port every simulated mysqld listens on; its host is the site's name.
const simPort = 3306

// simResolver maps each site to its mysqld: host = the site's name.
type simResolver struct{}

// Resolve implements grouploop.Resolver.
func (simResolver) Resolve(_ context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (grouploop.SiteAccess, error) {
	return grouploop.SiteAccess{Config: mysql.Config{Addr: fmt.Sprintf("%s:%d", site, simPort), Flavor: g.Spec.MySQL.Flavor},
		Endpoint: mysql.Endpoint{Host: site, Port: simPort}}, nil
}

// open is the operator's Opener: an Instance that reaches the site's
// mysqld across the operator's link.
func (r *realOperator) open(cfg mysql.Config) (mysql.Instance, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sim open %q: %w", cfg.Addr, err)
	}
	var in mysql.Instance = simInstance{w: r.w, name: host}
	if r.w.cfg.Instance != nil {
		in = r.w.cfg.Instance(in) // a test's broken server
	}
	return in, nil
}

// simInstance is one site's mysqld as pkg/mysql's Instance, reached from
// the operator's node: every verb fails when the link or the Pod is down,
// and acts on the world at once (logical time does not pass during a call).
type simInstance struct {
	w    *World
	name string
}

var _ mysql.Instance = simInstance{}

func (i simInstance) reach() (*site, error) {
	if i.w.operatorDead() {
		return nil, ErrOperatorDead // the process died mid-pass: nothing it sends lands
	}
	return netOps{i.w}.reach(i.name)
}

// answer is the outcome of a verb that changes the site (or of Status) as
// the operator sees it: while the site's answers are lost (lossy-replies),
// a verb that took effect times out. The waits and reads within a pass
// keep their answers, so that the promotion itself is what times out after
// taking effect (issue 13, path 6).
func (i simInstance) answer(err error) error {
	if s, ok := i.w.siteByName(i.name); ok && err == nil && s.lossy(i.w.step) {
		return fmt.Errorf("%s: answer lost: %w", i.name, mysql.ErrTimeout)
	}
	return i.replied(err)
}

// replied is any verb's outcome under drop-one-way: while what the site
// sends the operator is lost, whatever the verb did, no answer comes back.
func (i simInstance) replied(err error) error {
	s, ok := i.w.siteByName(i.name)
	if !ok || errors.Is(err, ErrUnreachable) || i.w.net.sends(s.idx, i.w.operatorNode(), i.w.step) {
		return err
	}
	return fmt.Errorf("%s: answer lost: %w", i.name, mysql.ErrTimeout)
}

// Addr implements mysql.Instance.
func (i simInstance) Addr() string { return fmt.Sprintf("%s:%d", i.name, simPort) }

// Status implements mysql.Instance: what MySQL 8 reports, or MariaDB in
// a MariaDB run (mariadb.go).
func (i simInstance) Status(context.Context) (mysql.Status, error) {
	s, err := i.reach()
	if err = i.answer(err); err != nil {
		return mysql.Status{}, err
	}
	return i.w.statusOf(s), nil
}

// statusOf is what s's mysqld reports: MySQL 8, or MariaDB in a MariaDB
// run (mariadb.go).
func (w *World) statusOf(s *site) mysql.Status {
	exec := s.db.executed.set(w.uuids)
	st := mysql.Status{Flavor: v1alpha1.FlavorMySQL, ServerID: uint32(s.idx + 1), ServerUUID: s.uuid,
		ReadOnly: s.db.readOnly, SuperReadOnly: s.db.readOnly, Executed: exec, GTIDExecuted: exec.String()}
	if w.cfg.MariaDB {
		w.mariaStatus(s, &st)
	}
	if s.db.source < 0 {
		return st
	}
	src := w.sites[s.db.source]
	received := s.db.executed.clone()
	received.raise(s.db.received)
	rs := &mysql.ReplicaStatus{SourceHost: src.name, SourcePort: simPort, SourceUser: "repl", IORunning: mysql.ThreadNo,
		SQLRunning: s.db.replicating, SecondsBehind: -1, Retrieved: received.set(w.uuids).String(), Applied: exec.String(),
		AutoPosition: true}
	if w.cfg.MariaDB {
		rs.Retrieved, rs.Applied, rs.UsingGTID = posString(s.db.maria.io), posString(s.db.maria.slave), "Current_Pos"
	}
	if s.db.replicating {
		rs.IORunning = mysql.ThreadConnecting
		if src.pod && src.db.up && w.net.connected(s.idx, src.idx, w.step) {
			rs.IORunning = mysql.ThreadYes
			rs.SecondsBehind = int64(s.db.executed.behind(received))
		}
	}
	st.Replica = rs
	return st
}

// Fence implements mysql.Instance: super_read_only, verified; under the
// fence faults it errs or times out (fence.go).
func (i simInstance) Fence(context.Context) error {
	s, err := i.reach()
	if err != nil {
		return i.answer(err)
	}
	if err := i.w.faultyFence(s, "operator"); err != nil {
		return i.answer(err)
	}
	return i.answer(netOps{i.w}.Fence(i.name))
}

// Unfence implements mysql.Instance.
func (i simInstance) Unfence(context.Context) error { return i.answer(netOps{i.w}.Unfence(i.name)) }

// KillAppConnections implements mysql.Instance: the sim's clients hold no sessions.
func (i simInstance) KillAppConnections(context.Context) (int, error) {
	_, err := i.reach()
	return 0, i.replied(err)
}

// WaitForGTID implements mysql.Instance: logical time does not pass during
// a call, so the wait is over at once, done or timed out.
func (i simInstance) WaitForGTID(_ context.Context, set gtid.Set, _ time.Duration) error {
	s, err := i.reach()
	if err != nil {
		return i.replied(err)
	}
	if !i.reached(s, set) {
		return fmt.Errorf("wait for %s on %s: %w", set, i.name, mysql.ErrTimeout)
	}
	return i.replied(nil)
}

// DrainRelayLog implements mysql.Instance, at once like WaitForGTID.
func (i simInstance) DrainRelayLog(context.Context, time.Duration) error {
	s, err := i.reach()
	switch {
	case err != nil:
		return i.replied(err)
	case s.db.source < 0:
		return i.replied(fmt.Errorf("drain %s: %w", i.name, mysql.ErrNotReplica))
	case !s.db.executed.contains(s.db.received):
		return fmt.Errorf("drain %s: %w", i.name, mysql.ErrTimeout)
	}
	return i.replied(nil)
}

// Promote implements mysql.Instance: STOP REPLICA, what the IO thread
// held received, RESET REPLICA ALL, capture the executed set, writable.
// The sim does not model semi-sync: opts.SemiSync is not set.
func (i simInstance) Promote(context.Context, mysql.PromoteOptions) (mysql.Promotion, error) {
	s, err := i.reach()
	if err != nil {
		return mysql.Promotion{}, i.answer(err)
	}
	var p mysql.Promotion
	if st := i.w.statusOf(s); st.Replica != nil {
		set, perr := st.Replica.RetrievedSet(st.Flavor)
		p.Retrieved, p.RetrievedUnknown = set, perr != nil
	}
	ops := netOps{i.w}
	if err := ops.StopReplica(i.name); err != nil {
		return mysql.Promotion{}, i.answer(err)
	}
	p.Executed = i.executed(s)
	if err := i.answer(ops.Unfence(i.name)); err != nil {
		return mysql.Promotion{}, err
	}
	return p, nil
}

// ApplierWork implements mysql.Instance: the sim applies a transaction at
// once, so its applier never holds one open.
func (i simInstance) ApplierWork(context.Context) (mysql.ApplierWork, error) {
	if _, err := i.reach(); err != nil {
		return mysql.ApplierWork{}, i.answer(err)
	}
	return mysql.ApplierWork{}, i.replied(nil)
}

// ReplicateFrom implements mysql.Instance: read-only, replicating from the
// site at source; nothing when it already replicates from it.
func (i simInstance) ReplicateFrom(_ context.Context, source mysql.Endpoint, _ mysql.Credentials) error {
	s, err := i.reach()
	if err != nil {
		return i.answer(err)
	}
	src, ok := i.w.siteByName(source.Host)
	if !ok {
		return fmt.Errorf("replicate %s from %s: %w", i.name, source.Host, ErrUnknownSite)
	}
	if s.db.source == src.idx && s.db.replicating {
		return nil
	}
	ops := netOps{i.w}
	if !s.db.readOnly {
		if err := ops.Fence(i.name); err != nil {
			return err
		}
	}
	return i.answer(ops.ReplicateFrom(i.name, src.name))
}

// StopReplication implements mysql.Instance.
func (i simInstance) StopReplication(context.Context) error {
	s, err := i.reach()
	if err != nil {
		return i.answer(err)
	}
	s.db.replicating = false
	return i.answer(nil)
}

// ErrantAgainst implements mysql.Instance.
func (i simInstance) ErrantAgainst(_ context.Context, source gtid.Set) (gtid.Set, error) {
	s, err := i.reach()
	if err != nil {
		return gtid.Set{}, i.replied(err)
	}
	if err := i.replied(nil); err != nil {
		return gtid.Set{}, err
	}
	if !i.w.cfg.MariaDB {
		return gtid.Errant(s.db.executed.set(i.w.uuids), source), nil
	}
	// The MariaDB flavor compares binlog states (gtid.BinlogErrant).
	src, err := stateFromSet(source)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("errant on %s: %w", i.name, err)
	}
	return gtid.BinlogErrant(i.w.binlogState(s.db.executed), src), nil
}

// executed is the executed set as the flavor reads it: MySQL's exact
// @@gtid_executed, MariaDB's @@gtid_binlog_state made a Set.
func (i simInstance) executed(s *site) gtid.Set {
	if i.w.cfg.MariaDB {
		return i.w.binlogState(s.db.executed).Set()
	}
	return s.db.executed.set(i.w.uuids)
}

// reached is WaitForGTID's test: MySQL's set containment, or MariaDB's
// position rule on gtid.PosFromSet's target (mariaReached).
func (i simInstance) reached(s *site, set gtid.Set) bool {
	if !i.w.cfg.MariaDB {
		return s.db.executed.set(i.w.uuids).Contains(set)
	}
	target, err := gtid.PosFromSet(set)
	return err == nil && i.w.mariaReached(s, target)
}

// errSidecarVerb: the operator never calls the sidecar's own verbs.
var errSidecarVerb = errors.New("not an operator verb")

// Shutdown implements mysql.Instance; only a sidecar shuts its mysqld down.
func (i simInstance) Shutdown(context.Context) error { return errSidecarVerb }

// HoldWrites implements mysql.Instance; only a sidecar holds writes.
func (i simInstance) HoldWrites(context.Context) (mysql.WriteHold, error) { return nil, errSidecarVerb }

// ArmLeaseFence implements mysql.Instance: the operator arms mysqld's
// lease fence before it makes the site writable, as the sidecar does on
// its ticks (sideDB.ArmLeaseFence).
func (i simInstance) ArmLeaseFence(_ context.Context, after time.Duration) error {
	s, err := i.reach()
	if err != nil {
		return i.replied(err)
	}
	// It keeps its answer under lossy-replies, as the waits and reads do:
	// the promotion right after it is what times out (issue 13, path 6).
	return i.replied(i.w.armLeaseFence(s, after))
}

// ConfigureSemiSync implements mysql.SemiSyncer. The sim does not model
// semi-sync replication (its scenarios leave spec.mysql.semiSync off, and
// its commits never wait): a reachable site accepts the setting and
// nothing changes, an unreachable one fails as any verb does.
func (i simInstance) ConfigureSemiSync(context.Context, mysql.SemiSyncSettings) error {
	_, err := i.reach()
	return i.replied(err)
}

var _ mysql.SemiSyncer = simInstance{}

// ReloadTLS implements mysql.Instance; the sim has no TLS.
func (i simInstance) ReloadTLS(context.Context) error { return nil }

// Close implements mysql.Instance.
func (i simInstance) Close() error { return nil }

// simRouter is where clients are sent: the -primary Service's site and
// the DNS name's, written to the trace when they move.
type simRouter struct {
	w            *World
	primary, dns string
}

// Converge implements controller.Router: the sim has no objects to converge.
func (*simRouter) Converge(context.Context, *v1alpha1.MysqlFailoverGroup) error { return nil }

// SetRoleLabels implements failover.Router.
func (r *simRouter) SetRoleLabels(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, site string) error {
	if r.w.operatorDead() {
		return ErrOperatorDead
	}
	if site != r.primary {
		r.primary = site
		r.w.logf("routing: -primary points at %q", site)
	}
	return nil
}

// PointDNS implements failover.Router.
func (r *simRouter) PointDNS(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, site string) (bool, error) {
	if r.w.operatorDead() {
		return false, ErrOperatorDead
	}
	changed := site != r.dns
	r.dns = site
	return changed, nil
}

// TaintSite implements failover.Router.
func (r *simRouter) TaintSite(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, site string) error {
	if r.w.operatorDead() {
		return ErrOperatorDead
	}
	r.w.logf("routing: nodes of %s tainted", site)
	return nil
}

// simRecorder writes the operator's Events to the trace.
type simRecorder struct{ w *World }

// Eventf implements events.EventRecorder.
func (r simRecorder) Eventf(_ runtime.Object, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	r.w.logf("event %s %s: %s", eventType, reason, fmt.Sprintf(note, args...))
}
