package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// Process says where the local mysqld can be found besides the SQL
// connection the sidecar reads it through. Both are used to tell a mysqld
// that is really gone from one that only lost its socket file, and the pid
// file is how a fence that cannot complete stops mysqld (escalate.go).
type Process struct {
	// PIDFile is mysqld's pid-file. The sidecar must share mysqld's process
	// namespace (the Pod sets shareProcessNamespace) for the pid to mean
	// the same process to both. Empty: no pid evidence, and no SIGKILL.
	PIDFile string
	// TCPAddr is mysqld's TCP listener on this host, e.g. 127.0.0.1:3306.
	// Empty: no TCP evidence.
	TCPAddr string
	// DialTimeout bounds the TCP probe (default 200 ms).
	DialTimeout time.Duration
}

// ProcessProbe is how the sidecar finds mysqld's process besides its SQL
// connection, and how it stops it when a fence cannot complete. Process,
// the Pod's pid file and TCP port, is the one the sidecar binary uses; a
// simulation brings its own (Config.ProcessProbe).
type ProcessProbe interface {
	// HasPID and HasTCP tell which kinds of evidence there are. Without
	// pid evidence there is no SIGKILL either.
	HasPID() bool
	HasTCP() bool
	// LivePID is the pid of the mysqld that runs, 0 when none does.
	LivePID() int
	// DialTCP dials mysqld's TCP listener.
	DialTCP(ctx context.Context) TCPState
	// Kill sends SIGKILL to the mysqld LivePID names, and reports its pid;
	// an error wrapping ErrNoProcess when none runs.
	Kill() (int, error)
}

// HasPID implements ProcessProbe: a pid file is configured.
func (p Process) HasPID() bool { return p.PIDFile != "" }

// HasTCP implements ProcessProbe: a TCP address is configured.
func (p Process) HasTCP() bool { return p.TCPAddr != "" }

// LivePID implements ProcessProbe (livePID).
func (p Process) LivePID() int { return p.livePID() }

// DialTCP implements ProcessProbe (dialTCP).
func (p Process) DialTCP(ctx context.Context) TCPState { return p.dialTCP(ctx) }

// Kill implements ProcessProbe (kill).
func (p Process) Kill() (int, error) { return p.kill() }

// mysqldNames are the command names (/proc/<pid>/comm) a mysqld process
// runs under; a pid file whose pid now runs anything else is stale.
var mysqldNames = []string{"mysqld", "mariadbd"}

// evidence is what the process probe found.
type evidence struct {
	// pid is mysqld's pid from the pid file, 0 when there is none or the
	// process it names is gone or is not a mysqld.
	pid int
	// tcp: TCPNone (not configured), TCPRefused, TCPOpen or TCPUnknown.
	tcp TCPState
}

// TCPState is what a dial of mysqld's TCP listener found.
type TCPState uint8

// The outcomes of a dial.
const (
	// TCPNone: no TCP evidence configured.
	TCPNone TCPState = iota
	// TCPRefused: the port refused the connection.
	TCPRefused
	// TCPOpen: the port accepted it.
	TCPOpen
	// TCPUnknown: neither (a timeout, another error).
	TCPUnknown
)

// gone tells whether the evidence proves mysqld is not running: at least
// one kind of evidence is configured, and every configured kind says so.
func (e evidence) gone(p ProcessProbe) bool {
	if !p.HasPID() && !p.HasTCP() {
		return false
	}
	return e.pid == 0 && (!p.HasTCP() || e.tcp == TCPRefused)
}

// probe gathers p's evidence within ctx.
func probe(ctx context.Context, p ProcessProbe) evidence {
	var e evidence
	if p.HasPID() {
		e.pid = p.LivePID()
	}
	if p.HasTCP() {
		e.tcp = p.DialTCP(ctx)
	}
	return e
}

// livePID is the pid in the pid file when it names a running mysqld, else 0.
// A zombie (killed, not yet reaped) counts as gone: it runs nothing.
func (p Process) livePID() int {
	if p.PIDFile == "" {
		return 0
	}
	b, err := os.ReadFile(p.PIDFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0
	}
	if !isMysqld(pid) {
		return 0
	}
	return pid
}

// isMysqld tells whether pid is a live (not zombie) mysqld process.
func isMysqld(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	comm, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return false
	}
	name := strings.TrimSpace(string(comm))
	known := false
	for _, n := range mysqldNames {
		known = known || name == n
	}
	if !known {
		return false
	}
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 && i+2 < len(rest) {
		return rest[i+2] != 'Z' && rest[i+2] != 'X'
	}
	return true
}

func (p Process) dialTCP(ctx context.Context) TCPState {
	timeout := p.DialTimeout
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(dctx, "tcp", p.TCPAddr)
	switch {
	case err == nil:
		_ = c.Close()
		return TCPOpen
	case errors.Is(err, syscall.ECONNREFUSED):
		return TCPRefused
	}
	return TCPUnknown
}

// kill sends SIGKILL to the mysqld the pid file names, and reports its pid.
func (p Process) kill() (int, error) {
	pid := p.livePID()
	if pid == 0 {
		return 0, fmt.Errorf("pid file %q: %w", p.PIDFile, ErrNoProcess)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return pid, fmt.Errorf("SIGKILL mysqld pid %d: %w", pid, err)
	}
	return pid, nil
}

// classify turns one status read into a DBState. A read that failed as if
// mysqld were gone (its socket missing, or the connection refused) proves
// nothing by itself: the socket file can be deleted while mysqld still
// serves TCP, and a refused socket can belong to a mysqld still starting.
// Such a read is down only when the process evidence says mysqld is gone;
// otherwise it is unknown, which the fencing rules treat as writable and the
// report to the operator leaves out.
//
// It also returns the pid in the pid file (0 without pid evidence), so
// that the escalation can tell the same mysqld from one that restarted
// (successor.go).
func (r *Runner) classify(ctx context.Context, st mysql.Status, err error) (DBState, int) {
	state := dbStateOf(st, err)
	p := r.process()
	if state == DBDown {
		e := probe(ctx, p)
		if e.gone(p) {
			return DBDown, 0
		}
		return DBUnknown, e.pid
	}
	if !p.HasPID() {
		return state, 0
	}
	return state, p.LivePID()
}

// process is where the Runner looks for mysqld's process: the
// Config's ProcessProbe, else its Process.
func (r *Runner) process() ProcessProbe {
	if r.cfg.ProcessProbe != nil {
		return r.cfg.ProcessProbe
	}
	return r.cfg.Process
}
