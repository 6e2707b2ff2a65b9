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

// mysqldNames are the command names (/proc/<pid>/comm) a mysqld process
// runs under; a pid file whose pid now runs anything else is stale.
var mysqldNames = []string{"mysqld", "mariadbd"}

// evidence is what the process probe found.
type evidence struct {
	// pid is mysqld's pid from the pid file, 0 when there is none or the
	// process it names is gone or is not a mysqld.
	pid int
	// tcp: tcpNone (not configured), tcpRefused, tcpOpen or tcpUnknown.
	tcp tcpState
}

type tcpState uint8

const (
	tcpNone tcpState = iota
	tcpRefused
	tcpOpen
	tcpUnknown
)

// gone tells whether the evidence proves mysqld is not running: at least
// one kind of evidence is configured, and every configured kind says so.
func (e evidence) gone(p Process) bool {
	if p.PIDFile == "" && p.TCPAddr == "" {
		return false
	}
	return e.pid == 0 && (p.TCPAddr == "" || e.tcp == tcpRefused)
}

// probe gathers the evidence within ctx.
func (p Process) probe(ctx context.Context) evidence {
	e := evidence{pid: p.livePID()}
	if p.TCPAddr != "" {
		e.tcp = p.dialTCP(ctx)
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

func (p Process) dialTCP(ctx context.Context) tcpState {
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
		return tcpOpen
	case errors.Is(err, syscall.ECONNREFUSED):
		return tcpRefused
	}
	return tcpUnknown
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
// With a writable read it also returns the pid in the pid file, so that the
// escalation can tell the same mysqld from one that restarted (fenced).
func (r *Runner) classify(ctx context.Context, st mysql.Status, err error) (DBState, int) {
	state := dbStateOf(st, err)
	switch {
	case state == DBWritable:
		return state, r.cfg.Process.livePID()
	case state != DBDown:
		return state, 0
	case r.cfg.Process.probe(ctx).gone(r.cfg.Process):
		return DBDown, 0
	}
	return DBUnknown, 0
}
