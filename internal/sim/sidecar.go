package sim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// Every site's sidecar is pkg/sidecar's Runner, the one the sidecar binary
// runs, stepped on the sim's logical time (sidecar.Stepper) over ports the
// sim implements: its clock (sideclock.go), its mysqld and mysqld's
// process (sidedb.go), and its requests to the operator and the peers
// (simGatherer). Its boot check, ticks, refresh ticks, lease wake-ups, the
// wake-up rule, the fence with its escalation, the write hold and the
// lease fence's arm are the Runner's own.

// maxWakesPerStep bounds the wake-ups a sidecar runs in one step (a
// periodic tick, a lease check, refresh ticks a RefreshGap apart).
const maxWakesPerStep = 32

// simSidecar is one sidecar process: the Runner, its Stepper and clock,
// and its HTTP handler, which its peers ask for its view.
type simSidecar struct {
	w    *World
	s    *site
	r    *sidecar.Runner
	st   *sidecar.Stepper
	clk  *sideClock
	http http.Handler
	// logs are the Runner's log records the trace shows, written after
	// each wake-up (sidelog.go).
	logs []sideLog
}

// carried is what an earlier process of the container kept in its state
// directory: its floor file and active record (zero in a new Pod).
type carried struct {
	floor  int64
	active bool
}

// startSidecar starts site s's sidecar process at the world's now with
// what an earlier process of the container kept. The process runs its
// boot check at once.
func (w *World) startSidecar(s *site, kept carried) {
	sc := &simSidecar{w: w, s: s}
	sc.clk = newSideClock(s, w.now())
	cfg := sidecar.Config{Settings: sidecar.Settings{Namespace: simGroup, Group: simGroup, Site: s.name,
		LeaseTimeout: w.cfg.LeaseTimeout, PeerCheckInterval: w.cfg.PeerCheckInterval, Keys: simSigs, Floor: kept.floor},
		MayBeActive: kept.active,
		OperatorURL: "http://operator." + simGroup, Logger: slog.New(sc), Clock: sc.clk,
		ProcessProbe: simProcess{w: w, s: s}, Gatherer: simGatherer{sc: sc}}
	for _, p := range w.sites {
		if p != s {
			cfg.Peers = append(cfg.Peers, sidecar.Peer{Name: p.name, URL: "http://" + p.name + "." + simGroup + ":8080"})
		}
	}
	if w.cfg.Sidecar != nil {
		w.cfg.Sidecar(&cfg) // a test's broken sidecar
	}
	r, err := sidecar.NewRunner(cfg, sideDB{w: w, s: s}, sc.clk.Now())
	if err != nil {
		panic(fmt.Sprintf("sim config validated, yet the sidecar's is not: %v", err))
	}
	sc.r, sc.http = r, r.Handler()
	s.sidecar = sc
	sc.st = r.Start(context.Background())
	sc.settle()
}

// stepSidecar runs site s's sidecar up to the world's now: it starts the
// first process of the Pod when its time comes, drops the process of a
// Pod that is gone, and runs every wake-up due, each at its own time on
// the process's clock (a paused process runs none: its clock runs on).
func (w *World) stepSidecar(s *site) {
	switch {
	case !s.pod:
		s.sidecar = nil
		return
	case s.sidecar == nil && w.step >= s.sidecarAt:
		w.startSidecar(s, carried{})
	}
	sc := s.sidecar
	if sc == nil {
		return
	}
	until := w.now().Sub(Epoch)
	if s.sidecarPaused(w.step) {
		sc.clk.toMono(until)
		return
	}
	for range maxWakesPerStep {
		at := sc.st.Next()
		if sc.clk.monoOf(at) > until {
			break
		}
		sc.clk.to(at)
		sc.st.Fire(context.Background())
		sc.settle()
	}
	sc.clk.toMono(until)
	sc.settle()
}

// settle runs the timers' callbacks that came due while the process ran
// (armLeaseWatch's), as their goroutines would once the Runner lets them,
// and writes the log records the trace shows.
func (sc *simSidecar) settle() {
	sc.clk.runFired()
	sc.flushLogs()
}

// view is the view the process holds, exactly as signed.
func (sc *simSidecar) view() (v1alpha1.ActiveSiteView, bool) {
	st := sc.r.Status()
	if st.View == nil {
		return v1alpha1.ActiveSiteView{}, false
	}
	return *st.View, true
}

// generation is the generation the process holds: what it kept in its
// floor file (the Runner writes the file on every adoption).
func (sc *simSidecar) generation() int64 {
	v, _ := sc.view()
	return v.Generation
}

// simGatherer is the sidecar's requests over the sim's network: its report
// to the operator's real handler (realOperator.answer), and GET
// /peer/active-site to each peer's Runner's own handler. Answers arrive in
// an order drawn from the world's order generator, and every gather also
// hears an impostor (impostor).
type simGatherer struct{ sc *simSidecar }

// Gather implements sidecar.Gatherer.
func (g simGatherer) Gather(_ context.Context, rep sidecar.Report, arrived func(string, sidecar.Reply)) (sidecar.Reply, []sidecar.PeerReply) {
	w, s := g.sc.w, g.sc.s
	op := w.askOperator(s, rep)
	peers := make([]sidecar.PeerReply, 0, len(w.sites)+1)
	for _, p := range w.sites {
		if p != s {
			peers = append(peers, sidecar.PeerReply{Peer: p.name, Reply: w.askPeer(s, p)})
		}
	}
	if arrived != nil {
		for _, i := range w.order.Perm(len(peers) + 1) {
			if i == len(peers) {
				arrived("", op)
			} else {
				arrived(peers[i].Peer, peers[i].Reply)
			}
		}
	}
	forged := impostor(s.name)
	for _, f := range forged {
		if arrived != nil {
			arrived(f.Peer, f.Reply)
		}
	}
	return op, append(peers, forged...)
}

// unreachable is a request that got no answer.
func unreachable(to string) sidecar.Reply {
	return sidecar.Reply{Err: fmt.Errorf("GET %s: %w", to, sidecar.ErrUnreachable)}
}

// askOperator is s's GET /active-site with rep: it reaches the operator
// and its answer comes back, or not, as the network says.
func (w *World) askOperator(s *site, rep sidecar.Report) sidecar.Reply {
	if !w.op.running() || !w.net.delivers(s.idx, w.operatorNode(), w.step) {
		return unreachable("operator")
	}
	// The report arrives; the answer may be lost on the way back.
	reply := w.op.answer(s, rep.Query(simGroup, simGroup))
	if reply == nil || !w.net.sends(w.operatorNode(), s.idx, w.step) {
		return unreachable("operator")
	}
	return *reply
}

// askPeer is s's GET /peer/active-site to p's sidecar, served by p's
// Runner's handler and read as the Runner reads it.
func (w *World) askPeer(s, p *site) sidecar.Reply {
	if !p.pod || p.sidecar == nil || p.sidecarPaused(w.step) || !w.net.call(s.idx, p.idx, w.step) {
		return unreachable("peer " + p.name)
	}
	rec := httptest.NewRecorder()
	p.sidecar.http.ServeHTTP(rec, w.peerRequest)
	// Classify is a function of the answer alone, and a peer serves the
	// same body until its view changes: read each body once.
	key := peerAnswer{code: rec.Code, body: rec.Body.String()}
	if reply, ok := w.peerReplies[key]; ok {
		return reply
	}
	reply := sidecar.Classify(rec.Code, rec.Body.Bytes(), true)
	if len(w.peerReplies) >= maxPeerReplies {
		clear(w.peerReplies)
	}
	w.peerReplies[key] = reply
	return reply
}

// peerAnswer is an HTTP answer of a peer.
type peerAnswer struct {
	code int
	body string
}

// maxPeerReplies bounds the peers' answers a world remembers.
const maxPeerReplies = 64

// newPeerRequest is GET /peer/active-site, made once per world: handlers
// only read it.
func newPeerRequest() *http.Request {
	return httptest.NewRequest(http.MethodGet, v1alpha1.PathPeerActiveSite, nil)
}

// ensure the sim's ports are the Runner's.
var (
	_ sidecar.Gatherer     = simGatherer{}
	_ sidecar.ProcessProbe = simProcess{}
	_ sidecar.MySQL        = sideDB{}
)
