package sim

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// applyBudget is how many relayed transactions a healthy SQL thread applies per
// step; clients commit at most one per step, so healthy replicas keep up.
const applyBudget = 3

// mysqld is one site's database server.
type mysqld struct {
	up          bool
	readOnly    bool
	executed    txs
	received    txs // what the IO thread fetched (executed plus relay log, per source)
	source      int // replication source site, -1 when none
	replicating bool
	maria       mariaPos // MariaDB runs only (mariadb.go)
	// hold is the sidecar's write hold (the global read lock), nil when
	// none: no client write commits and the SQL thread applies nothing.
	hold *simHold
}

// site is one site: its Pod (sidecar and mysqld) and what it is doing.
type site struct {
	idx       int
	name      string
	role      v1alpha1.SiteRole
	uuid      string
	pod       bool
	startedAt time.Time // the Pod's start time, as Kubernetes shows it
	goneAt    time.Time // when the Pod was last deleted
	podBackAt int
	db        mysqld
	dbBackAt  int
	slowUntil int
	// sidecarAt is the step the Pod's first sidecar process starts: the
	// sites' sidecars start apart, so they tick apart.
	sidecarAt int
	// sidecarStarts is the sidecar container's restartCount in this Pod.
	sidecarStarts int32
	// Faults of the real operator's runs (realop_faults.go): until when the
	// site is frozen, its answers to the operator lost, its Pod orphaned;
	// and its sidecar's and kubelet's clock offset, in steps.
	frozenUntil, lossyUntil, orphanUntil int
	skew                                 int
	sidecar                              *simSidecar // nil while no process runs
	// More of those faults (fence.go): until when mysqld alone is frozen,
	// fences fail, fences are slow (and by how many steps); dbBoots counts
	// mysqld's starts, so that a late fence dies with its process.
	dbFrozenUntil, fenceFailUntil, fenceSlowUntil, fenceSlowBy int
	dbBoots, sidecarFrozenUntil                                int
	// readWindow is set while a sidecar that was frozen wakes: its first
	// read of mysqld takes time, and the clients write meanwhile (thaw).
	readWindow bool
	// leaseFenceAt is when mysqld's lease fence event fires, on the
	// site's wall clock; zero when none is pending (fence.go).
	leaseFenceAt time.Time
}

func (s *site) writable() bool { return s.pod && s.db.up && !s.db.readOnly }

// acceptsWrites reports whether a client write commits on s at step: it
// is writable, and neither frozen nor held by its sidecar.
func (s *site) acceptsWrites(step int) bool {
	return s.writable() && !s.mysqldPaused(step) && s.db.hold == nil
}

// clockOf is the wall-clock time on site s's machine: the world's, off by
// its skew. Only the kubelet's Lease carries it: the sidecar times its
// lease on the monotonic clock, which a wall-clock step does not move.
func (w *World) clockOf(s *site) time.Time { return w.now().Add(time.Duration(s.skew) * StepDuration) }

// World is one simulation run in progress.
type World struct {
	cfg      Config
	step     int
	rng      *rand.Rand
	sites    []*site
	uuids    []string
	net      *network
	op       operatorProcess
	check    *checker
	trace    []string
	sched    Schedule
	next     int
	opBackAt int
	// opSamePod: the operator down comes back in the same Pods (restart-operator).
	opSamePod bool
	admin     []int // step at which an administrator's fence ends, per site
	stats     Stats
	// commitAt[k][n-1] is the commit order of transaction n of site k's server.
	commitAt [][]uint64
	commits  uint64
	// lateFences are operator fences still queued in a mysqld (fence.go).
	lateFences []lateFence
	// seqAt[k][n-1] is the MariaDB seq of transaction n of site k's
	// server (MariaDB runs only, mariadb.go).
	seqAt [][]uint64
	// order draws the order in which a sidecar's answers arrive, apart
	// from rng, so that it moved no other draw of a seed.
	order *rand.Rand
	// peerRequest is GET /peer/active-site, which the sidecars' handlers serve.
	peerRequest *http.Request
	// peerReplies are the peers' answers read so far, by body (askPeer).
	peerReplies map[peerAnswer]sidecar.Reply
}

func newWorld(cfg Config, sched Schedule) *World {
	cfg = cfg.withDefaults()
	n := len(cfg.Roles)
	w := &World{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x21)), net: newNetwork(n), sched: sched,
		admin: make([]int, n), commitAt: make([][]uint64, n), order: rand.New(rand.NewPCG(cfg.Seed, 0x0d3)),
		peerRequest: newPeerRequest(), peerReplies: map[peerAnswer]sidecar.Reply{}}
	phaseRng := rand.New(rand.NewPCG(cfg.Seed, 0x9a5e))
	for i, r := range cfg.Roles {
		s := &site{idx: i, name: siteNames[i], role: r, uuid: fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, i+1),
			pod: true, startedAt: w.now(), sidecarAt: phaseRng.IntN(steps(cfg.PeerCheckInterval))}
		s.db = mysqld{up: true, readOnly: true, executed: make(txs, n), received: make(txs, n), source: 0, replicating: i != 0}
		if i == 0 {
			s.db.source = -1
		}
		w.sites = append(w.sites, s)
		w.uuids = append(w.uuids, s.uuid)
	}
	w.check = newChecker(w)
	// A first start: every mysqld boots read-only, every sidecar without
	// a view; the operator's first passes pick the primary.
	w.op = newRealOperator(w)
	return w
}

func (w *World) now() time.Time { return Epoch.Add(time.Duration(w.step) * StepDuration) }

func (w *World) logf(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf("t=%04d ", w.step)+fmt.Sprintf(format, args...))
}

func (w *World) siteByName(name string) (*site, bool) {
	for _, s := range w.sites {
		if s.name == name {
			return s, true
		}
	}
	return nil, false
}

// operatorNode is the operator's node number in the network.
func (w *World) operatorNode() int { return len(w.sites) }

// runStep advances the world by one step and checks the invariants.
func (w *World) runStep() {
	w.restore()
	w.fireFaults()
	w.clientWrites()
	w.replicate()
	w.stepSidecars()
	if w.op.running() {
		w.op.step(w.now())
	}
	w.check.afterStep()
	w.step++
}

// clientWrites commits a client transaction on every writable mysqld, by chance.
func (w *World) clientWrites() {
	for _, s := range w.sites {
		w.clientWrite(s)
	}
}

// clientWrite commits a client transaction on s if it accepts writes, by chance.
func (w *World) clientWrite(s *site) {
	if s.acceptsWrites(w.step) && w.rng.Float64() < w.cfg.WriteChance {
		w.commit(s)
	}
}

// replicate runs every replica's IO thread (if its source is reachable) and
// SQL thread (unless stalled).
func (w *World) replicate() {
	for _, s := range w.sites {
		if !s.pod || !s.db.up || !s.db.replicating || s.db.source < 0 || s.mysqldPaused(w.step) {
			continue
		}
		src := w.sites[s.db.source]
		if src.pod && src.db.up && !src.mysqldPaused(w.step) && w.net.stream(s.idx, src.idx, w.step) {
			before := s.db.received
			if w.cfg.MariaDB {
				before = before.clone()
			}
			s.db.received.raise(src.db.executed)
			w.noteReceived(s, src, before)
		}
		budget := applyBudget
		if w.step < s.slowUntil || s.db.hold != nil {
			budget = 0
		}
		for ; budget > 0 && w.applyNext(&s.db); budget-- {
		}
	}
}

// commit commits a client transaction on s, the next of its own server.
func (w *World) commit(s *site) {
	w.check.atCommit(s)
	n := s.db.executed[s.idx] + 1
	w.assignSeq(s, n)
	s.db.executed[s.idx] = n
	w.commits++
	if pos := w.commitAt[s.idx]; uint64(len(pos)) >= n {
		pos[n-1] = w.commits // a recloned server reuses the numbers of wiped transactions
	} else {
		w.commitAt[s.idx] = append(pos, w.commits)
	}
	w.stats.Writes++
	w.check.noteCommit(s, n)
}

// applyNext applies the relayed transaction committed first, as a source's
// binlog order (and so a replica's applier) follows commit order.
func (w *World) applyNext(db *mysqld) bool {
	best := -1
	for k := range db.executed {
		if db.executed[k] < db.received[k] &&
			(best < 0 || w.commitAt[k][db.executed[k]] < w.commitAt[best][db.executed[best]]) {
			best = k
		}
	}
	if best < 0 {
		return false
	}
	db.executed[best]++
	w.noteApplied(db, best)
	return true
}

// stepSidecars runs every site's sidecar up to now.
func (w *World) stepSidecars() {
	for _, s := range w.sites {
		w.stepSidecar(s)
	}
}

// unfence makes a site writable; only the operator's verbs call it.
func (w *World) unfence(s *site) {
	if !s.db.readOnly {
		return
	}
	w.check.beforeUnfence(s)
	s.db.readOnly = false
	w.check.afterUnfence(s)
}

// boot starts a site's mysqld: always fenced, relay log discarded, replication
// resumed from its configured source.
func (w *World) boot(s *site) {
	s.db.up = true
	s.db.readOnly = true
	s.db.received = s.db.executed.clone()
	s.dbBackAt, s.dbFrozenUntil = 0, 0
	s.db.hold = nil
	s.dbBoots++
}
