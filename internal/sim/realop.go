package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// maxPassesPerStep bounds the passes one step runs: a planned failover asks
// for its next pass at once, and logical time does not move within a step.
const maxPassesPerStep = 4

// realOperator runs pkg/controller's per-group poll loop, the one the
// operator runs, against the world: its Registry, evidence, debouncers,
// Pod listing, status persistence, emergency and planned sequences, and its
// GET /active-site handler. Only its surroundings are simulated: the API
// server (controller-runtime's fake client, which refuses writes on a stale
// resourceVersion), each mysqld (simInstance), routing (simRouter) and the
// clock (the step's logical time).
type realOperator struct {
	w   *World
	clk *clocktesting.FakeClock
	api client.Client // the API server: it outlives every operator process
	key types.NamespacedName
	// procs are the operator's replicas (realop_proc.go); lease is their
	// leader-election lock; started counts processes, for their ids.
	procs   []*opProc
	lease   simLease
	started int
	spread  *rand.Rand // which replica a request lands on
	kube    *simKube
	// writes counts the API server's writes; seen is the projection of the
	// group read at seenWrites of them (persisted re-reads only after a write).
	writes, seenWrites int
	seen               *Status
	seenGroup          *v1alpha1.MysqlFailoverGroup
	fast               fastGroup
	// sent keeps each site's last reports and answers, for late-report and late-view.
	sent []sentLog
	// skew is how many steps the operator's wall clock is off the
	// world's; its monotonic clock is not (realop_clock.go).
	skew int
	// crash is the pending death of the leader's container after a status
	// write (restart-operator by=N, realop_restart.go).
	crash crashPlan
}

// sentLog is one site's last queries to the operator and its answers;
// late, when set, is delivered instead of the next answer.
type sentLog struct {
	queries []url.Values
	answers []*sidecar.Reply
	late    *sidecar.Reply
}

func newRealOperator(w *World) *realOperator {
	r := &realOperator{w: w, clk: clocktesting.NewFakeClock(monoTime(w.now(), w.now().Sub(Epoch)+monoBase)),
		key: types.NamespacedName{Namespace: simGroup, Name: simGroup}, spread: rand.New(rand.NewPCG(w.cfg.Seed, 0x5e7))}
	// The plain object tracker: no managed fields, which the loop never
	// reads and which cost more than everything else in a run.
	tracker := clienttesting.NewObjectTracker(simScheme, serializer.NewCodecFactory(simScheme).UniversalDecoder())
	r.fast = fastGroup{tracker: tracker, key: r.key, reads: newReadCache()}
	r.api = fake.NewClientBuilder().WithScheme(simScheme).WithObjectTracker(tracker).
		WithStatusSubresource(&v1alpha1.MysqlFailoverGroup{}).WithObjects(r.group()).
		WithInterceptorFuncs(r.apiFuncs()).Build()
	r.kube = newSimKube(w, r.api)
	r.restart(w.now())
	return r
}

// simScheme knows the group and the core objects the loop lists.
var simScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// group is the sim's MysqlFailoverGroup as an administrator creates it:
// the Config's sites and timings; status empty (the loop's first start).
func (r *realOperator) group() *v1alpha1.MysqlFailoverGroup {
	c := r.w.cfg
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: r.key.Namespace, Name: r.key.Name}}
	for _, s := range r.w.sites {
		g.Spec.Sites = append(g.Spec.Sites, v1alpha1.Site{Name: s.name, Role: s.role})
	}
	g.Spec.MySQL.Flavor, g.Spec.MySQL.Config = c.flavor(), simUserConfig
	g.Spec.PollInterval = metav1.Duration{Duration: c.PollInterval}
	g.Spec.FailureThreshold, g.Spec.RecoveryThreshold = int32(c.FailureThreshold), int32(c.RecoveryThreshold)
	g.Spec.FailoverCooldown = metav1.Duration{Duration: c.Cooldown}
	g.Spec.Sidecar.LeaseTimeout = metav1.Duration{Duration: c.LeaseTimeout}
	g.Spec.Sidecar.PeerCheckInterval = metav1.Duration{Duration: c.PeerCheckInterval}
	g.Spec.PlannedFailover.MaxLagWait = metav1.Duration{Duration: c.MaxLagWait}
	// No CRD defaulting here: every field the loop reads is set.
	g.Spec.PlannedFailover.DrainTimeout = metav1.Duration{Duration: 5 * time.Second}
	g.Spec.PlannedFailover.OnCooldown = v1alpha1.CooldownReject
	// The API server's default: an emergency failover salvages the old
	// primary's tail when its mysqld answers fenced (SalvageFrom).
	g.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
	return g
}

// running reports whether any replica runs.
func (r *realOperator) running() bool {
	for _, p := range r.procs {
		if p.up {
			return true
		}
	}
	return false
}

// stop stops every replica (operator-down: the whole Deployment).
func (r *realOperator) stop() {
	for _, p := range r.procs {
		p.exit()
	}
}

// restart starts every replica afresh, all standing by: the next step
// elects one. The persisted status is kept.
func (r *realOperator) restart(now time.Time) {
	r.stop()
	r.clk.SetTime(r.opTime(now))
	if r.procs == nil {
		r.procs = make([]*opProc, max(1, r.w.cfg.OperatorReplicas))
		for i := range r.procs {
			r.procs[i] = &opProc{r: r}
		}
	}
	for _, p := range r.procs {
		p.start(now)
	}
	if r.sent == nil {
		r.sent = make([]sentLog, len(r.w.sites))
	}
	r.elect(now)
}

// step runs the passes due at now on every replica that believes it
// leads, then lets every replica's elector act: a leader resumed from a
// pause makes its first pass before it notices it lost the lock.
func (r *realOperator) step(now time.Time) {
	r.clk.SetTime(r.opTime(now))
	r.kube.sync(now)
	for _, p := range r.procs {
		if p.leads && p.awake() {
			p.passes(now)
		}
	}
	r.buryCrashed()
	r.elect(now)
}

// answer is the sidecar's GET /active-site with the query its Runner
// sends (its report), served by the real handler, and the answer read as
// the Runner reads it; nil when no replica answers (the request times out).
func (r *realOperator) answer(s *site, q url.Values) *sidecar.Reply {
	p := r.pick(s)
	if p == nil {
		return nil
	}
	r.clk.SetTime(r.opTime(r.w.now()))
	rec := p.serveQuery(q, s)
	reply := sidecar.Classify(rec.Code, rec.Body.Bytes(), false)
	r.remember(s, q, &reply)
	if late := r.sent[s.idx].late; late != nil {
		r.sent[s.idx].late = nil
		r.w.logf("%s's sidecar gets a late answer of the operator (generation %d)", s.name, late.View.Generation)
		return late
	}
	return &reply
}

// current reads the group from the API server.
func (r *realOperator) current() *v1alpha1.MysqlFailoverGroup {
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := r.api.Get(context.Background(), r.key, g); err != nil {
		panic(fmt.Sprintf("sim API server lost the group: %v", err))
	}
	return g
}

// annotate sets (value non-empty) or removes an annotation of the group,
// as kubectl annotate does.
func (r *realOperator) annotate(name, value string) {
	g := r.current()
	base := g.DeepCopy()
	if g.Annotations == nil {
		g.Annotations = map[string]string{}
	}
	if value == "" {
		delete(g.Annotations, name)
	} else {
		g.Annotations[name] = value
	}
	if err := r.api.Patch(context.Background(), g, client.MergeFrom(base)); err != nil {
		panic(fmt.Sprintf("sim annotate: %v", err))
	}
}

func (r *realOperator) requestPlanned(site string) {
	r.annotate(v1alpha1.PlannedFailoverAnnotation, site)
}

func (r *realOperator) adminFence(site string, on bool) {
	fenced := map[string]bool{}
	if v := r.current().Annotations[v1alpha1.FencedSitesAnnotation]; v != "" {
		for _, s := range strings.Split(v, ",") {
			fenced[s] = true
		}
	}
	fenced[site] = on
	var names []string
	for _, s := range r.w.sites {
		if fenced[s.name] {
			names = append(names, s.name)
		}
	}
	r.annotate(v1alpha1.FencedSitesAnnotation, strings.Join(names, ","))
}

// clearDivergence is the administrator's status edit after recloning site.
func (r *realOperator) clearDivergence(site string) {
	g := r.current()
	base := g.DeepCopy()
	for i := range g.Status.Sites {
		if g.Status.Sites[i].Name == site {
			g.Status.Sites[i].DivergentGtid = ""
		}
	}
	if err := r.api.Status().Patch(context.Background(), g, client.MergeFrom(base)); err != nil {
		panic(fmt.Sprintf("sim clear divergence: %v", err))
	}
}

// simKube keeps the API server's Pods and Nodes in step with the world:
// one node per site, whose kubelet renews its Lease while it reaches the
// API server (every kubeletBeatSteps), and one Pod per site while the site's Pod runs.
type simKube struct {
	w       *World
	api     client.Client
	pods    []*corev1.Pod // per site; nil while none
	pending []bool        // per site: its Pod is a replacement not started yet
	made    []int         // Pods made per site, for their names
}

func newSimKube(w *World, api client.Client) *simKube {
	n := len(w.sites)
	k := &simKube{w: w, api: api, pods: make([]*corev1.Pod, n), pending: make([]bool, n), made: make([]int, n)}
	ctx := context.Background()
	for _, s := range w.sites {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: kubeNode(s)}}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.NewTime(w.now())}}
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: kubeNode(s)}}
		renew := metav1.NewMicroTime(w.now())
		l.Spec.RenewTime = &renew
		k.must(api.Create(ctx, n))
		k.must(api.Create(ctx, l))
	}
	k.sync(w.now())
	return k
}

// kubeletBeatSteps is how often a kubelet renews its node's Lease: the
// kubelet's default, 10 s.
const kubeletBeatSteps = 10

func kubeNode(s *site) string { return "node-" + s.name }

func (k *simKube) must(err error) {
	if err != nil {
		panic(fmt.Sprintf("sim API server: %v", err))
	}
}

// sync creates and deletes Pods as the sites' Pods come and go, records
// sidecar restarts, and renews each reachable node's heartbeat.
func (k *simKube) sync(now time.Time) {
	ctx := context.Background()
	for _, s := range k.w.sites {
		p := k.pods[s.idx]
		orphan := k.w.step < s.orphanUntil
		switch {
		case orphan && p != nil && !k.pending[s.idx]:
			// Force-deleted while its node cannot reach the API server:
			// its processes run on; the replacement waits, Pending.
			k.must(client.IgnoreNotFound(k.api.Delete(ctx, p)))
			k.pods[s.idx] = k.createPod(s)
			k.pending[s.idx] = true
		case orphan:
		case s.pod && p != nil && k.pending[s.idx]:
			k.pending[s.idx] = false
			k.setSidecar(s, now)
		case s.pod && p == nil:
			k.pods[s.idx] = k.createPod(s)
			k.setSidecar(s, now)
		case !s.pod && p != nil && !k.pending[s.idx]:
			k.must(client.IgnoreNotFound(k.api.Delete(ctx, p)))
			k.pods[s.idx] = nil
		case p != nil && len(p.Status.ContainerStatuses) > 0 && s.sidecarStarts != p.Status.ContainerStatuses[0].RestartCount:
			k.setSidecar(s, now)
		}
		if (k.w.step+s.idx)%kubeletBeatSteps == 0 && !orphan && k.w.net.sends(s.idx, k.w.operatorNode(), k.w.step) {
			l := &coordinationv1.Lease{}
			k.must(k.api.Get(ctx, client.ObjectKey{Namespace: "kube-node-lease", Name: kubeNode(s)}, l))
			renew := metav1.NewMicroTime(k.w.clockOf(s)) // the kubelet's own wall clock
			l.Spec.RenewTime = &renew
			k.must(k.api.Update(ctx, l))
		}
	}
}

// createPod creates a Pod of site s on its node, not started yet.
func (k *simKube) createPod(s *site) *corev1.Pod {
	k.made[s.idx]++
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: simGroup,
		Name:   fmt.Sprintf("%s-%s-%d", simGroup, s.name, k.made[s.idx]),
		UID:    types.UID(fmt.Sprintf("uid-%s-%d", s.name, k.made[s.idx])),
		Labels: map[string]string{v1alpha1.LabelGroup: simGroup, v1alpha1.LabelSite: s.name}}}
	grace := int64(1)
	p.Spec.NodeName, p.Spec.TerminationGracePeriodSeconds = kubeNode(s), &grace
	k.must(k.api.Create(context.Background(), p))
	return p
}

// setSidecar records the site's sidecar container: its restarts and start.
func (k *simKube) setSidecar(s *site, now time.Time) {
	p := k.pods[s.idx]
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: routing.ContainerSidecar, RestartCount: s.sidecarStarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}}}
	k.must(k.api.Status().Update(context.Background(), p))
}
