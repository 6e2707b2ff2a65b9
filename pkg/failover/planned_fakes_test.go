package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// pworld is the fake world of the planned tests: the emergency tests' world
// (sites, routing, events) plus clients that write to the writable site,
// replication that copies sources' sets, scripted faults, the annotation,
// and status-only persistence as the API server's status subresource does.
type pworld struct {
	*world
	m        *Planned
	uuids    map[string]string
	seq      map[string]int
	acked    gtid.Set        // every write a client saw committed
	lagging  map[string]bool // site whose SQL thread is stopped
	kills    []int           // KillAppConnections results, in order; then 0
	errs     map[string]error
	clears   int
	finished []string // result:target of PlannedFinished
	lagWaits int
	phases   []string // every persisted phase, deduplicated in a row
	messages []string // every persisted message of the planned-failover block
	// writers records every pass's writable sites; promotions records, per
	// promotion of the target, whether it held the source's set.
	maxWriters int
	lossAt     []string
	// cache is the sites' Dragonfly when a test gives them one
	// (planned_cache_test.go); cacheResults the promotions counted.
	cache        *fakeCache
	cacheResults []string
}

var errFake = errors.New("fake: scripted failure")

func newPWorld(t *testing.T) *pworld {
	w := &pworld{world: newWorld(t), uuids: map[string]string{"a": uuidA, "b": uuidB},
		seq: map[string]int{"a": 10, "b": 0}, lagging: map[string]bool{}, errs: map[string]error{}}
	w.acked = gtid.MustParseSet(uuidA + ":1-10")
	w.persisted.Spec.FailoverCooldown = metav1.Duration{Duration: time.Minute}
	w.persisted.Spec.PlannedFailover = v1alpha1.PlannedFailoverSpec{MaxLagWait: metav1.Duration{Duration: 10 * time.Second},
		DrainTimeout: metav1.Duration{Duration: 3 * time.Second}, OnCooldown: v1alpha1.CooldownReject}
	w.persisted.Spec.DNS = &v1alpha1.DNSSpec{Hostname: "orders.example.com"}
	w.labels, w.dns = "a", "a"
	w.m = NewPlanned(w.penv())
	return w
}

func (w *pworld) penv() PlannedEnv {
	env := PlannedEnv{DB: w, Router: w, Persister: w, Publisher: w, Notifier: w, Annotator: w, Clock: w}
	if w.cache != nil {
		env.Cache, env.CacheRouter = w.cache, w.cache
	}
	return env
}

// restart is an operator restart: the machine's memory is lost.
func (w *pworld) restart() { w.m = NewPlanned(w.penv()) }

// addThird adds site c (dr-only unless role says otherwise), replicating from a.
func (w *pworld) addThird(role v1alpha1.SiteRole) {
	w.addSite("c")
	w.persisted.Spec.Sites[2].Role = role
	w.uuids["c"], w.seq["c"] = "cccccccc-0000-0000-0000-000000000003", 0
	w.sites["c"].executed = w.sites["a"].executed
}

func (w *pworld) annotate(v string) {
	if w.persisted.Annotations == nil {
		w.persisted.Annotations = map[string]string{}
	}
	w.persisted.Annotations[v1alpha1.PlannedFailoverAnnotation] = v
}

func (w *pworld) annotation() (string, bool) {
	v, ok := w.persisted.Annotations[v1alpha1.PlannedFailoverAnnotation]
	return v, ok
}

// tick is what happens between two passes: every writable site takes a
// client write, then replicas that are not lagging copy their source.
func (w *pworld) tick() {
	for _, n := range w.order {
		s := w.sites[n]
		if s.up && s.writable {
			w.seq[n]++
			tx := gtid.MustParseSet(fmt.Sprintf("%s:%d", w.uuids[n], w.seq[n]))
			s.executed = s.executed.Union(tx)
			w.acked = w.acked.Union(tx)
		}
	}
	for _, n := range w.order {
		s := w.sites[n]
		if src, ok := w.sites[s.source]; ok && s.up && src.up && !w.lagging[n] {
			s.executed = s.executed.Union(src.executed)
		}
	}
}

// pass is the world's pass with status' divergence marks, as the poll loop reads them.
func (w *pworld) pass() Pass {
	p := w.world.pass()
	for i := range p.Input.Sites {
		for _, rec := range w.persisted.Status.Sites {
			if rec.Name == p.Input.Sites[i].Name && rec.DivergentGtid != "" {
				p.Input.Sites[i].Diverged = true
			}
		}
	}
	return p
}

// step runs one pass at w.now and checks the one-writer rule.
func (w *pworld) step() (PlannedOutcome, error) {
	w.tick()
	out, err := w.m.Step(w.t.Context(), w.pass())
	if n := len(w.writers()); n > w.maxWriters {
		w.maxWriters = n
	}
	return out, err
}

// run steps until the block is terminal (or Acted stays false), advancing
// the clock by each outcome's Next (at least 10 ms), at most limit passes.
func (w *pworld) run(limit int) PlannedOutcome {
	w.t.Helper()
	var out PlannedOutcome
	for range limit {
		var err error
		out, err = w.step()
		if err != nil && !errors.Is(err, errFake) {
			w.t.Logf("pass: %v", err)
		}
		b := w.persisted.Status.PlannedFailover
		if b != nil && b.Phase.Terminal() {
			return out
		}
		if !out.Acted && err == nil && (b == nil || b.Phase != v1alpha1.PhaseDeferred) {
			return out
		}
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
	}
	return out
}

func (w *pworld) block() *v1alpha1.PlannedFailoverStatus { return w.persisted.Status.PlannedFailover }

// Persister: status only, like the status subresource.

func (w *pworld) PersistStatus(_ context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	w.persists++
	if w.failAt > 0 && w.persists >= w.failAt {
		return errors.New("fake: operator crashed before this write")
	}
	w.persisted.Status = *g.Status.DeepCopy()
	w.persisted.ResourceVersion = fmt.Sprint(w.persists)
	g.ResourceVersion = w.persisted.ResourceVersion
	// As the API client does when it decodes the answer (or re-reads after
	// a conflict), g's pointers are replaced by fresh copies.
	g.Status = *g.Status.DeepCopy()
	if b := g.Status.PlannedFailover; b != nil {
		w.messages = append(w.messages, b.Message)
		if ph := string(b.Phase); len(w.phases) == 0 || w.phases[len(w.phases)-1] != ph {
			w.phases = append(w.phases, ph)
		}
	}
	return nil
}

// PersistStatusExclusive writes only when g still has the persisted
// resourceVersion: no other writer wrote since g was read.
func (w *pworld) PersistStatusExclusive(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	if g.ResourceVersion != w.persisted.ResourceVersion {
		return errConflict
	}
	return w.PersistStatus(ctx, g)
}

// PlannedDB
func (w *pworld) Unfence(_ context.Context, n string) error {
	if err := w.errs["unfence"]; err != nil {
		return err
	}
	s, err := w.site(n)
	if err == nil {
		w.madeWritable(n)
		s.writable = true
	}
	return err
}

func (w *pworld) Fence(ctx context.Context, n string) error {
	if err := w.errs["fence"]; err != nil {
		return err
	}
	return w.world.Fence(ctx, n)
}

func (w *pworld) KillAppConnections(_ context.Context, n string) (int, error) {
	if _, err := w.site(n); err != nil {
		return 0, err
	}
	if len(w.kills) == 0 {
		return 0, nil
	}
	k := w.kills[0]
	if len(w.kills) > 1 {
		w.kills = w.kills[1:]
	}
	return k, nil
}

// WaitForGTID blocks (on the fake clock) for timeout when the set is not there.
func (w *pworld) WaitForGTID(_ context.Context, n string, set gtid.Set, timeout time.Duration) error {
	s, err := w.site(n)
	switch {
	case err != nil:
		return err
	case !s.executed.Contains(set):
		w.now = w.now.Add(timeout)
		return fmt.Errorf("%s: %w", n, ErrLagPending)
	}
	return nil
}

func (w *pworld) Executed(_ context.Context, n string) (gtid.Set, error) {
	s, err := w.site(n)
	if err != nil {
		return gtid.Set{}, err
	}
	return s.executed, nil
}

func (w *pworld) Promote(ctx context.Context, n string, opts PromoteOptions) (Promotion, error) {
	if err := w.errs["promote"]; err != nil {
		return Promotion{}, err
	}
	if b := w.block(); b != nil && n == b.Target {
		src := w.sites[b.SourcePrimary]
		if missing := src.executed.Subtract(w.sites[n].executed); !missing.IsEmpty() {
			w.lossAt = append(w.lossAt, missing.String())
		}
	}
	return w.world.Promote(ctx, n, opts)
}

func (w *pworld) CheckReplica(_ context.Context, n string) error {
	s, err := w.site(n)
	switch {
	case err != nil:
		return err
	case s.source == "":
		return fmt.Errorf("%s: %w", n, ErrNotReplicating)
	}
	return nil
}

// Router
func (w *pworld) SetRoleLabels(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, p string) error {
	if err := w.errs["labels"]; err != nil {
		return err
	}
	return w.world.SetRoleLabels(ctx, g, p)
}

func (w *pworld) PointDNS(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, p string) (bool, error) {
	if err := w.errs["dns"]; err != nil {
		return false, err
	}
	return w.world.PointDNS(ctx, g, p)
}

// Annotator
func (w *pworld) ClearPlannedRequest(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, value string) error {
	if err := w.errs["clear"]; err != nil {
		return err
	}
	if v, ok := w.annotation(); ok && v == value {
		delete(w.persisted.Annotations, v1alpha1.PlannedFailoverAnnotation)
		w.clears++
	}
	return nil
}

// PlannedNotifier
func (w *pworld) PlannedFinished(_ *v1alpha1.MysqlFailoverGroup, target, result string, _ time.Duration) {
	w.finished = append(w.finished, result+":"+target)
}

func (w *pworld) PlannedLagWaited(*v1alpha1.MysqlFailoverGroup, string, time.Duration) { w.lagWaits++ }

// assertNoFence checks that a rejected request changed nothing.
func (w *pworld) assertNoFence(t *testing.T) {
	t.Helper()
	if got := w.writers(); !slices.Equal(got, []string{"a"}) || w.labels != "a" || w.dns != "a" ||
		w.persisted.Status.ActiveSite != "a" || w.persisted.Status.TopologyGeneration != 1 {
		t.Fatalf("topology changed: writers %v labels %q dns %q status %+v", got, w.labels, w.dns, w.persisted.Status)
	}
	if w.world.promotes["b"] > 0 {
		t.Fatal("b was promoted")
	}
}

// assertEnded checks the terminal block, that the annotation is gone and
// the Event recorded.
func (w *pworld) assertEnded(t *testing.T, phase v1alpha1.PlannedFailoverPhase, reason, event string) {
	t.Helper()
	b := w.block()
	if b == nil || b.Phase != phase || b.Reason != reason {
		t.Fatalf("block %+v, want %s/%s (phases %v)", b, phase, reason, w.phases)
	}
	if b.CompletionTime == nil || b.StartTime == nil {
		t.Fatalf("times not set: %+v", b)
	}
	if v, ok := w.annotation(); ok {
		t.Fatalf("annotation %q still set", v)
	}
	if !slices.Contains(w.events, event) {
		t.Fatalf("events %v lack %s", w.events, event)
	}
}

// assertSwitched checks a completed switchover a -> b without loss.
func (w *pworld) assertSwitched(t *testing.T) {
	t.Helper()
	w.assertEnded(t, v1alpha1.PhaseSucceeded, "", v1alpha1.EventPlannedFailoverCompleted)
	st, b := w.persisted.Status, w.block()
	if b.TransactionsLost == nil || *b.TransactionsLost != 0 || len(w.lossAt) > 0 {
		t.Fatalf("transactionsLost %v, promoted lacking %v", b.TransactionsLost, w.lossAt)
	}
	if !w.sites["b"].executed.Contains(w.acked) {
		t.Fatalf("acknowledged writes missing on b: %s", w.acked.Subtract(w.sites["b"].executed))
	}
	if st.ActiveSite != "b" || st.TopologyGeneration != 2 || st.LastFailover == nil ||
		st.LastFailover.Kind != v1alpha1.KindPlanned || st.LastFailover.From != "a" {
		t.Fatalf("status after the switchover: %+v", st)
	}
	if got := w.writers(); !slices.Equal(got, []string{"b"}) || w.labels != "b" || w.dns != "b" || w.maxWriters > 1 {
		t.Fatalf("writers %v (max %d) labels %q dns %q", got, w.maxWriters, w.labels, w.dns)
	}
	if w.sites["a"].source != "b" {
		t.Fatalf("a replicates from %q, want b", w.sites["a"].source)
	}
	if !slices.Contains(w.finished, PlannedResultSuccess+":b") || w.failovers != 1 {
		t.Fatalf("metrics: finished %v failovers %d", w.finished, w.failovers)
	}
}
