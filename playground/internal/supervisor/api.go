package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/faults"
)

// Request is the body of every control call.
type Request struct {
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Container string `json:"container,omitempty"`
	Signal    string `json:"signal,omitempty"` // KILL, STOP, CONT, TERM
	Site      string `json:"site,omitempty"`
	A         string `json:"a,omitempty"`
	B         string `json:"b,omitempty"`
}

// Status is the answer of /status.
type Status struct {
	Info       Info               `json:"info"`
	Partitions []faults.Partition `json:"partitions"`
	Stopped    []string           `json:"stoppedSites"`
}

var signals = map[string]syscall.Signal{
	"KILL": syscall.SIGKILL, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT, "TERM": syscall.SIGTERM,
}

func (s *Supervisor) startAPI(context.Context) error {
	path := s.cfg.path(SocketFile)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/signal", s.handle(s.apiSignal))
	mux.HandleFunc("/node-stop", s.handle(func(ctx context.Context, r Request) error { return s.StopNode(ctx, r.Site) }))
	mux.HandleFunc("/node-start", s.handle(func(ctx context.Context, r Request) error { return s.StartNode(ctx, r.Site) }))
	mux.HandleFunc("/partition", s.handle(func(ctx context.Context, r Request) error { return s.faults.Partition(ctx, r.A, r.B) }))
	mux.HandleFunc("/heal", s.handle(func(ctx context.Context, r Request) error { return s.faults.Heal(ctx, r.A, r.B) }))
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(s.status()) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	s.info.Socket = path
	s.info.SupervisorPID = os.Getpid()
	s.stopAPI = func() { _ = srv.Close() }
	return nil
}

func (s *Supervisor) handle(fn func(context.Context, Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		if err := fn(ctx, req); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Supervisor) apiSignal(_ context.Context, r Request) error {
	sig, ok := signals[r.Signal]
	if !ok {
		return fmt.Errorf("unknown signal %q (KILL, STOP, CONT, TERM)", r.Signal)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.nodes {
		for _, p := range n.Provider.Pods() {
			if p.Namespace == r.Namespace && p.Name == r.Pod {
				return n.Provider.Signal(r.Namespace, r.Pod, r.Container, sig)
			}
		}
	}
	return fmt.Errorf("pod %s/%s runs on no running node", r.Namespace, r.Pod)
}

// StopNode makes a site's node fail at once: its Pods' processes die, its
// heartbeats stop, and its addresses drop every packet.
func (s *Supervisor) StopNode(ctx context.Context, site string) error {
	s.mu.Lock()
	n, ok := s.nodes[site]
	if ok {
		delete(s.nodes, site)
		s.down[site] = true
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("site %q has no running node (sites: %v)", site, s.cfg.Sites)
	}
	if err := s.faults.Isolate(ctx, site, true); err != nil {
		return err
	}
	n.Stop()
	return nil
}

// StartNode brings a stopped site's node back: it restarts the Pods still
// bound to it, as a rebooted node would.
func (s *Supervisor) StartNode(ctx context.Context, name string) error {
	s.mu.Lock()
	_, running := s.nodes[name]
	s.mu.Unlock()
	if running {
		return fmt.Errorf("site %q is running", name)
	}
	for _, st := range s.cfg.sites() {
		if st.name != name {
			continue
		}
		if err := s.faults.Isolate(ctx, name, false); err != nil {
			return err
		}
		return s.startNode(ctx, st)
	}
	return errors.New("unknown site " + name)
}

func (s *Supervisor) status() Status {
	st := Status{Info: s.info, Partitions: s.faults.Partitions()}
	s.mu.Lock()
	for site := range s.down {
		st.Stopped = append(st.Stopped, site)
	}
	s.mu.Unlock()
	sort.Strings(st.Stopped)
	return st
}
