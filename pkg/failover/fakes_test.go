package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

var t0 = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

const uuidA, uuidB = "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002"

// fakeSite is one mysqld of the fake world.
type fakeSite struct {
	up       bool // reachable
	seenDown bool // the poll loop sees it unreachable even though SQL gets through
	// seenReadOnly: the poll loop's probes still show it read-only (taken
	// before a late promotion landed), whatever it is now.
	seenReadOnly bool
	// promoteTimesOut: Promote makes it writable but answers an error, as a
	// statement that ran after the client's deadline.
	promoteTimesOut bool
	// promoteLost: the operator dies as Promote is sent; the statement
	// never reaches mysqld.
	promoteLost bool
	writable    bool
	executed    gtid.Set
	source      string
	// retrieved is what the probes show its IO thread received; relay is
	// what its relay log holds now, which a drain applies (less than
	// retrieved when the relay log was lost since the probe).
	retrieved, relay gtid.Set
	// resetUnread: Promote cannot read what its IO thread received.
	resetUnread bool
	// slowApply: its applier applies one relay log transaction per
	// RelayRead (a drain applies none of it); sqlStopped: its SQL thread
	// stopped, nothing is applied.
	slowApply, sqlStopped bool
}

var errDown = errors.New("fake: site unreachable")

// world is the fake group: sites, clock, and everything the sequence calls.
type world struct {
	t                *testing.T
	now              time.Time
	sites            map[string]*fakeSite
	order            []string
	promotes         map[string]int
	drainErr         error
	routeErr         error
	labels           string
	dns              string
	tainted          []string
	events           []string
	messages         []string // the Events' messages, in order
	failovers, flips int
	salvaged         int64 // counted by Notifier.Salvaged
	published        []int64
	// persisted is the durable copy of the group; failAt makes the n-th
	// persist (1-based, counting from the harness's start) fail, as a crash.
	persisted *v1alpha1.MysqlFailoverGroup
	persists  int
	steps     []string // each persisted step, as "Step:confirmedBy", then "done"
	failAt    int
	// failOnce, when set, fails the first write it matches (then clears).
	failOnce func(*v1alpha1.MysqlFailoverGroup) bool
	// conflictAt makes the n-th persist meet a conflict: as the status
	// patcher does, the write still lands, but the group is left holding a
	// re-read copy, so pointers into its old status are detached.
	conflictAt int
	reports    map[string]*topology.Report
	// fencePause is how long the operator is paused inside each Fence call.
	fencePause time.Duration
	// twoWriters records the writable sites each time a promotion left more than one.
	twoWriters [][]string
	sidecars   map[string]int64 // live sidecars and the generation they hold
	// onPromote, when set, is called as each Promote statement starts.
	onPromote func(site string)
	// asked, when set, is how long before each pass each site's sidecar
	// last asked (Pass.SidecarAskedAt; a site missing never asked). Nil:
	// the passes name no asks and nothing is armed.
	asked map[string]time.Duration
	// armErr fails ArmLeaseFence; armed is when each site's lease fence
	// fires, on the fake's clock; unarmed lists the sites made writable
	// while theirs was not armed to fire later.
	armErr     error
	held       []string // sites whose arm met the sidecar's write hold
	armed      map[string]time.Time
	armedAfter map[string]time.Duration
	unarmed    []string
	// semiSync, when set, is the passes' Pass.SemiSync; semiErr fails
	// ConfigureSemiSync; semiRoles is each site's semi-sync part as
	// ConfigureSemiSync last set it; unsourced lists the sites made
	// writable while not the semi-sync source under an enabled spec.
	semiSync  *topology.SemiSyncInput
	semiErr   error
	semiRoles map[string]topology.SemiSyncRole
	unsourced []string
	// semiPromote lists the sites whose source part Promote set under
	// their topology lock.
	semiPromote []string
	// salvageReads and salvages list the SalvageRead and Salvage calls
	// ("b<-a"); salvageStops, when set, is how many of the tail's
	// transactions a Salvage brings before it fails with salvageErr;
	// salvageTakes is how long each Salvage takes on the fake's clock;
	// salvageUnread: the target's set cannot be read after a failed
	// salvage (the empty set is returned). A target left the semi-sync
	// source (semiRoles) stalls: its applied commits wait for
	// acknowledgements, and nothing arrives.
	salvageReads  []string
	salvages      []string
	salvageStops  int
	salvageErr    error
	salvageTakes  time.Duration
	salvageUnread bool
	// salvageMoved lists the salvages refused for a target that changed
	// since it was read.
	salvageMoved []string
	// relayMemo, when set, is the sequence whose memory of relay logs
	// found short the passes read (Emergency.ReceivedLost), as the poll
	// loop does.
	relayMemo *Emergency
}

// addSite adds a third site c, replicating from a.
func (w *world) addSite(n string) {
	w.order = append(w.order, n)
	w.sites[n] = &fakeSite{up: true, executed: gtid.MustParseSet(uuidA + ":1-7"), source: "a"}
	w.persisted.Spec.Sites = append(w.persisted.Spec.Sites, v1alpha1.Site{Name: n, Role: v1alpha1.RolePrimaryCandidate, Zone: n})
	w.persisted.Status.Sites = append(w.persisted.Status.Sites, v1alpha1.SiteStatus{Name: n, Fenced: true})
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, now: t0, sites: map[string]*fakeSite{}, promotes: map[string]int{},
		reports: map[string]*topology.Report{}, sidecars: map[string]int64{}}
	w.order = []string{"a", "b"}
	w.sites["a"] = &fakeSite{up: true, writable: true, executed: gtid.MustParseSet(uuidA + ":1-10")}
	w.sites["b"] = &fakeSite{up: true, executed: gtid.MustParseSet(uuidA + ":1-8"), source: "a"}
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "ns"}}
	for _, n := range w.order {
		g.Spec.Sites = append(g.Spec.Sites, v1alpha1.Site{Name: n, Role: v1alpha1.RolePrimaryCandidate, Zone: n})
	}
	g.Spec.FailoverCooldown = metav1.Duration{Duration: time.Minute}
	g.Spec.Sidecar.LeaseTimeout = metav1.Duration{Duration: 1500 * time.Millisecond}
	g.Spec.Sidecar.PeerCheckInterval = metav1.Duration{Duration: 500 * time.Millisecond}
	g.Status = v1alpha1.MysqlFailoverGroupStatus{ActiveSite: "a", TopologyGeneration: 1,
		Sites: []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", Fenced: true}}}
	w.persisted = g
	return w
}

func (w *world) site(n string) (*fakeSite, error) {
	s, ok := w.sites[n]
	if !ok || !s.up {
		return nil, fmt.Errorf("%s: %w", n, errDown)
	}
	return s, nil
}

// DB
func (w *world) Fence(_ context.Context, n string) error {
	w.now = w.now.Add(w.fencePause)
	s, err := w.site(n)
	if err == nil {
		s.writable = false
	}
	return err
}

// DrainRelayLog applies what the site's relay log holds.
func (w *world) DrainRelayLog(_ context.Context, n string, _ time.Duration) error {
	s, ok := w.sites[n]
	if ok && (s.slowApply || s.sqlStopped) {
		return ErrDrainPending
	}
	if ok && s.up && w.drainErr == nil {
		s.executed, s.relay = s.executed.Union(s.relay), gtid.Set{}
	}
	return w.drainErr
}

func (w *world) Promote(_ context.Context, n string, opts PromoteOptions) (Promotion, error) {
	s, err := w.site(n)
	if err != nil {
		return Promotion{}, err
	}
	if w.onPromote != nil {
		w.onPromote(n)
	}
	if s.promoteLost {
		return Promotion{}, errors.New("fake: the operator died before the statement was sent")
	}
	if r := opts.SemiSync; r != nil { // under the site's topology lock
		if w.semiErr != nil && !opts.SemiSyncBestEffort {
			return Promotion{}, w.semiErr
		}
		if w.semiErr == nil {
			w.semiPromote = append(w.semiPromote, n)
			if w.semiRoles == nil {
				w.semiRoles = map[string]topology.SemiSyncRole{}
			}
			w.semiRoles[n] = *r
		}
	}
	w.promotes[n]++
	w.madeWritable(n)
	// The reset drops the relay log: what it held and was not applied.
	pr := Promotion{Executed: s.executed, Retrieved: s.executed.Union(s.relay)}
	if s.resetUnread {
		pr.Retrieved, pr.RetrievedUnknown = gtid.Set{}, true
	}
	s.writable, s.source, s.relay = true, "", gtid.Set{}
	if ws := w.writers(); len(ws) > 1 {
		w.twoWriters = append(w.twoWriters, ws)
	}
	if s.promoteTimesOut {
		return Promotion{}, context.DeadlineExceeded
	}
	return pr, nil
}

func (w *world) ArmLeaseFence(_ context.Context, n string, after time.Duration) error {
	if _, err := w.site(n); err != nil {
		return err
	}
	if errors.Is(w.armErr, ErrWritesHeld) {
		w.held = append(w.held, n)
	}
	if w.armErr != nil {
		return w.armErr
	}
	if w.armed == nil {
		w.armed, w.armedAfter = map[string]time.Time{}, map[string]time.Duration{}
	}
	w.armed[n], w.armedAfter[n] = w.now.Add(after), after
	return nil
}

// madeWritable records a site made writable without its lease fence armed
// (a lease under 5 s, with a 2 s arm timeout, has none at all).
func (w *world) madeWritable(n string) {
	if w.asked != nil && w.persisted.Spec.Sidecar.LeaseTimeout.Duration >= 5*time.Second && !w.armed[n].After(w.now) &&
		!slices.Contains(w.held, n) {
		w.unarmed = append(w.unarmed, n)
	}
	if w.semiSync != nil && w.semiSync.Enabled && !w.semiRoles[n].Source {
		w.unsourced = append(w.unsourced, n)
	}
}

func (w *world) ConfigureSemiSync(_ context.Context, r topology.SemiSyncRole) error {
	if _, err := w.site(r.Site); err != nil {
		return err
	}
	if w.semiErr != nil {
		return w.semiErr
	}
	if w.semiRoles == nil {
		w.semiRoles = map[string]topology.SemiSyncRole{}
	}
	w.semiRoles[r.Site] = r
	return nil
}

func (w *world) ReplicateFrom(_ context.Context, n, src string) error {
	s, err := w.site(n)
	if err == nil {
		s.source, s.writable = src, false
	}
	return err
}

// RelayRead reads a site's replication: its IO thread holds received what
// it applied and what its relay log holds (a relay log lost since the
// probe shows as a received set that shrank).
func (w *world) RelayRead(_ context.Context, n string) (topology.RelayRead, error) {
	s, err := w.site(n)
	if err != nil {
		return topology.RelayRead{}, err
	}
	if s.slowApply && !s.sqlStopped {
		for _, iv := range s.relay.Intervals(uuidA) {
			one := gtid.MustParseSet(fmt.Sprintf("%s:%d", uuidA, iv.Start))
			s.executed, s.relay = s.executed.Union(one), s.relay.Subtract(one)
			break
		}
	}
	return topology.RelayRead{Executed: s.executed, Retrieved: s.executed.Union(s.relay), Applying: !s.sqlStopped}, nil
}

// SalvageRead reads a site as the operator's SQL would.
func (w *world) SalvageRead(_ context.Context, n string) (bool, gtid.Set, error) {
	w.salvageReads = append(w.salvageReads, n)
	s, err := w.site(n)
	if err != nil {
		return false, gtid.Set{}, err
	}
	return !s.writable, s.executed, nil
}

// Salvage gives n the transactions of src up to until, in order (the
// fake's sets are one uuid's prefixes), refusing a writable source.
func (w *world) Salvage(_ context.Context, n, src string, until, expect gtid.Set, part *topology.SemiSyncRole) (gtid.Set, error) {
	w.salvages = append(w.salvages, n+"<-"+src)
	w.now = w.now.Add(w.salvageTakes)
	s, err := w.site(n)
	if err != nil {
		return gtid.Set{}, err
	}
	from, err := w.site(src)
	if err != nil {
		return s.executed, err
	}
	if !s.executed.Equal(expect) || s.source != src {
		w.salvageMoved = append(w.salvageMoved, n)
		return s.executed, ErrSalvageTargetMoved
	}
	if from.writable || s.writable {
		w.t.Errorf("salvage %s from %s: source writable %v, target writable %v", n, src, from.writable, s.writable)
		return s.executed, ErrSalvageSourceWritable
	}
	if part != nil && w.semiErr == nil { // under the lock, after the checks
		if w.semiRoles == nil {
			w.semiRoles = map[string]topology.SemiSyncRole{}
		}
		w.semiRoles[n] = *part
	}
	tail := from.executed.Intersect(until).Subtract(s.executed)
	if w.semiSync != nil && w.semiSync.Enabled && w.semiRoles[n].Source {
		return s.executed, errors.New("fake: stalled waiting for semi-sync acknowledgements")
	}
	if w.salvageErr != nil {
		var part []string
		for _, iv := range tail.Intervals(uuidA) {
			for seq := iv.Start; seq <= iv.End && len(part) < w.salvageStops; seq++ {
				part = append(part, fmt.Sprintf("%s:%d", uuidA, seq))
			}
		}
		if len(part) > 0 {
			s.executed = s.executed.Union(gtid.MustParseSet(strings.Join(part, ",")))
		}
		if w.salvageUnread {
			return gtid.Set{}, w.salvageErr
		}
		return s.executed, w.salvageErr
	}
	s.executed = s.executed.Union(tail)
	return s.executed, nil
}

// Router
func (w *world) SetRoleLabels(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, p string) error {
	if w.routeErr != nil {
		return w.routeErr
	}
	w.labels = p
	return nil
}

func (w *world) PointDNS(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, p string) (bool, error) {
	changed := w.dns != p
	w.dns = p
	return changed, nil
}

func (w *world) TaintSite(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, s string) error {
	if !slices.Contains(w.tainted, s) {
		w.tainted = append(w.tainted, s)
	}
	return nil
}

// Persister
func (w *world) PersistStatus(_ context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	w.persists++
	if w.failOnce != nil && w.failOnce(g) {
		w.failOnce = nil
		return errors.New("fake: API timeout on this write")
	}
	if w.failAt > 0 && w.persists >= w.failAt {
		return errors.New("fake: operator crashed before this write")
	}
	w.persisted = g.DeepCopy()
	if w.persists == w.conflictAt {
		*g = *w.persisted.DeepCopy()
	}
	if it := g.Status.Failover; it != nil {
		w.steps = append(w.steps, string(it.Step)+":"+it.FenceConfirmedBy)
	} else if g.Status.LastFailover != nil {
		w.steps = append(w.steps, "done")
	}
	return nil
}

// errConflict is the fake API server's answer to a write whose optimistic
// lock names an older resourceVersion.
var errConflict = errors.New("fake: conflict: the object has been modified")

// PersistStatusExclusive writes only when g still has the persisted
// resourceVersion: no other writer wrote since g was read.
func (w *world) PersistStatusExclusive(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	if g.ResourceVersion != w.persisted.ResourceVersion {
		return errConflict
	}
	return w.PersistStatus(ctx, g)
}

// otherWriter writes the persisted status as another operator process
// would (a new leader taking over): a new resourceVersion, and a condition.
func (w *world) otherWriter() {
	w.persisted.ResourceVersion += "'"
	w.persisted.Status.ObservedGeneration++
}

// Publisher and Notifier
func (w *world) Publish(g *v1alpha1.MysqlFailoverGroup) {
	w.published = append(w.published, g.Status.TopologyGeneration)
}

func (w *world) Event(_ *v1alpha1.MysqlFailoverGroup, _, reason, message string) {
	w.events = append(w.events, reason)
	w.messages = append(w.messages, message)
}

func (w *world) FailoverCompleted(*v1alpha1.MysqlFailoverGroup, v1alpha1.FailoverKind) { w.failovers++ }
func (w *world) DNSFlipped(*v1alpha1.MysqlFailoverGroup)                               { w.flips++ }
func (w *world) Salvaged(_ *v1alpha1.MysqlFailoverGroup, n int64)                      { w.salvaged += n }

func (w *world) Now() time.Time { return w.now }

func (w *world) Since(t time.Time) time.Duration { return w.now.Sub(t) }

func (w *world) env() Env {
	return Env{DB: w, Router: w, Persister: w, Publisher: w, Notifier: w, Clock: w}
}

// pass reads the persisted group, observes the world as the poll loop would
// (every site with a fresh state, unreachable ones judged by ConfirmFence)
// and decides.
func (w *world) pass() Pass {
	g := w.persisted.DeepCopy()
	st := &g.Status
	settings := SettingsFor(g, Settings{DrainTimeout: 3 * time.Second, CallTimeout: time.Second})
	evidence := func(n string) topology.Evidence {
		ev := topology.Evidence{Site: n, Operator: "op1", Now: w.now, Active: st.ActiveSite, FailingSince: t0, FailingSeq: 100, Report: w.reports[n],
			LastContact: t0, LeaseTimeout: settings.LeaseTimeout, PeerCheckInterval: settings.PeerCheckInterval}
		for _, p := range w.order {
			if gen, ok := w.sidecars[p]; p != n && ok {
				ev.Peers = append(ev.Peers, topology.PeerAdoption{Site: p, Adopted: gen >= st.TopologyGeneration, At: t0})
			}
		}
		return ev
	}
	in := topology.Input{ActiveSite: st.ActiveSite, Generation: st.TopologyGeneration, History: History(st),
		InFlight: InFlight(st), PlannedInFlight: PlannedInFlight(st), Cooldown: g.Spec.FailoverCooldown.Duration, Now: w.now}
	for _, n := range w.order {
		s := w.sites[n]
		v := topology.SiteView{Name: n, Role: v1alpha1.RolePrimaryCandidate, Executed: s.executed,
			Replication: topology.Replication{Running: s.source != "", Retrieved: s.retrieved}, MaybeWritable: MaybeWritable(st, n)}
		if w.relayMemo != nil {
			v.Replication.ReceivedLost = w.relayMemo.ReceivedLost(n, s.retrieved)
		}
		switch {
		case !s.up || s.seenDown:
			v.State = v1alpha1.StateUnreachable
			ok, _ := topology.ConfirmFence(evidence(n))
			v.FenceConfirmed = ok || HeldReadOnly(st, n)
		case s.writable && !s.seenReadOnly:
			v.State = v1alpha1.StateWritable
		default:
			v.State = v1alpha1.StateReadOnly
		}
		in.Sites = append(in.Sites, v)
	}
	d, err := topology.Decide(in)
	if err != nil {
		w.t.Fatalf("decide: %v", err)
	}
	sidecar := func(n string) (int64, bool) { gen, ok := w.sidecars[n]; return gen, ok }
	p := Pass{Group: g, Input: in, Decision: d, Evidence: evidence, Sidecar: sidecar, Settings: settings}
	if w.semiSync != nil {
		ss := *w.semiSync
		ss.Active = st.ActiveSite
		p.SemiSync = &ss
	}
	if w.asked != nil {
		p.SidecarAskedAt = func(n string) time.Time {
			if ago, ok := w.asked[n]; ok {
				return w.now.Add(-ago)
			}
			return time.Time{}
		}
	}
	return p
}

// writers lists the writable sites.
func (w *world) writers() []string {
	var out []string
	for _, n := range w.order {
		if w.sites[n].writable {
			out = append(out, n)
		}
	}
	return out
}
