package clone

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// copyBuffer is the buffer each end of a stream copies through: large
// writes mean fewer chunks, TLS records and pipe writes per GiB.
const copyBuffer = 1 << 20

// PathClone is where a donor's sidecar serves its backup stream (GET).
const PathClone = "/peer/clone"

// TrailerResult is the HTTP trailer that ends a clone stream: "ok" when
// mariadb-backup completed, otherwise "error: " and why. A stream without
// it was cut short.
const TrailerResult = "Bloodraven-Clone-Result"

// resultOK is TrailerResult's value for a complete backup.
const resultOK = "ok"

// Donor streams a physical backup of the local mysqld. It is an
// http.Handler serving one clone at a time (a second request meanwhile gets
// 503); mount it behind Gate.
type Donor struct {
	// Backup is the mariadb-backup binary (default "mariadb-backup" on PATH).
	Backup string
	// DefaultsFile is the donor mysqld's configuration, passed first as
	// --defaults-file so that mariadb-backup finds its datadir and reads
	// nothing from /etc/mysql; empty passes --no-defaults.
	DefaultsFile string
	// Socket (preferred) or Host and Port reach the donor mysqld as User
	// with Password: an account with RELOAD, PROCESS, LOCK TABLES, BINLOG
	// MONITOR and SLAVE MONITOR.
	Socket   string
	Host     string
	Port     int
	User     string
	Password string
	// TempDir is given to mariadb-backup as --target-dir for what it keeps
	// aside while streaming (default os.TempDir()).
	TempDir string
	// Rate caps the stream in bytes per second; zero or less is unlimited
	// (spec.recovery.maxCloneRate).
	Rate int64
	// Timeout bounds one whole stream; zero is no bound beyond the
	// request's own (spec.recovery.cloneTimeout).
	Timeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	busy atomic.Bool
}

// args are mariadb-backup's arguments, --defaults-file first.
func (d *Donor) args(infoDir string) []string {
	var a []string
	if d.DefaultsFile != "" {
		a = append(a, "--defaults-file="+d.DefaultsFile)
	} else {
		a = append(a, "--no-defaults")
	}
	tmp := d.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	a = append(a, "--backup", "--stream=xbstream", "--target-dir="+tmp)
	if infoDir != "" {
		a = append(a, "--extra-lsndir="+infoDir)
	}
	if d.Socket != "" {
		a = append(a, "--socket="+d.Socket)
	} else {
		a = append(a, "--host="+d.Host, "--port="+strconv.Itoa(d.Port))
	}
	if d.User != "" {
		a = append(a, "--user="+d.User)
	}
	if d.Password != "" {
		a = append(a, "--password="+d.Password)
	}
	return a
}

func (d *Donor) validate() error {
	if d.Socket == "" && (d.Host == "" || d.Port <= 0) {
		return fmt.Errorf("%w: donor needs a socket or a host and port", ErrInvalidConfig)
	}
	return nil
}

func (d *Donor) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

// Stream runs mariadb-backup and copies its xbstream output to w, throttled
// to Rate, within Timeout. It returns the number of bytes written; on any
// failure (the backup's, w's, or the deadline) the backup is stopped and the
// error wraps ErrBackupFailed.
func (d *Donor) Stream(ctx context.Context, w io.Writer) (int64, error) {
	return d.stream(ctx, w, "")
}

// StreamBackup is Stream for a backup to keep (pkg/backup): mariadb-backup also
// writes its xtrabackup_info into infoDir, whose binlog_pos line names the
// binlog coordinates and GTID position the backup is consistent with. It
// refuses with ErrBusy while a clone streams: one mariadb-backup at a time.
func (d *Donor) StreamBackup(ctx context.Context, w io.Writer, infoDir string) (int64, error) {
	if infoDir == "" {
		return 0, fmt.Errorf("%w: a backup needs a folder for its info", ErrInvalidConfig)
	}
	if !d.busy.CompareAndSwap(false, true) {
		return 0, ErrBusy
	}
	defer d.busy.Store(false)
	return d.stream(ctx, w, infoDir)
}

func (d *Donor) stream(ctx context.Context, w io.Writer, infoDir string) (int64, error) {
	if err := d.validate(); err != nil {
		return 0, err
	}
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bin := d.Backup
	if bin == "" {
		bin = "mariadb-backup"
	}
	cmd := exec.CommandContext(ctx, bin, d.args(infoDir)...)
	// xtrabackup_info's start and end times are in the tool's time zone.
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.WaitDelay = 5 * time.Second
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBackupFailed, err)
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%w: start %s: %w", ErrBackupFailed, bin, err)
	}
	bw := bufio.NewWriterSize(w, copyBuffer)
	n, copyErr := bw.ReadFrom(Throttle(ctx, out, d.Rate))
	if copyErr == nil {
		copyErr = bw.Flush()
	}
	if copyErr != nil {
		cancel() // the receiver is gone or the deadline passed: stop the backup
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil && copyErr == nil && waitErr != nil:
		return n, fmt.Errorf("%w after %d bytes: %w", ErrBackupFailed, n, context.Cause(ctx))
	case copyErr != nil:
		return n, fmt.Errorf("%w after %d bytes: send: %w", ErrBackupFailed, n, copyErr)
	case waitErr != nil:
		return n, fmt.Errorf("%w after %d bytes: %w: %s", ErrBackupFailed, n, waitErr, bytes.TrimSpace(stderr.bytes()))
	}
	return n, nil
}

// ServeHTTP streams one backup: 200 with the xbstream as the body and
// TrailerResult at its end; 503 while another clone streams.
func (d *Donor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := d.logger().With("remote", r.RemoteAddr)
	if !d.busy.CompareAndSwap(false, true) {
		log.Warn("clone refused: another clone is streaming")
		http.Error(w, ErrBusy.Error(), http.StatusServiceUnavailable)
		return
	}
	defer d.busy.Store(false)
	// The server's write timeout is for small answers; a clone's bound is
	// its own Timeout (with a margin for the trailer), or none.
	deadline := time.Time{}
	if d.Timeout > 0 {
		deadline = time.Now().Add(d.Timeout + 10*time.Second)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(deadline)
	w.Header().Set("Trailer", TrailerResult)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	start := time.Now()
	n, err := d.Stream(r.Context(), w)
	if err != nil {
		log.Error("clone stream failed", "bytes", n, "elapsed", time.Since(start), "error", err)
		w.Header().Set(TrailerResult, "error: "+oneLine(err.Error()))
		return
	}
	log.Info("clone streamed", "bytes", n, "elapsed", time.Since(start))
	w.Header().Set(TrailerResult, resultOK)
}

// oneLine keeps a header value on one line.
func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	if len(b) > 1024 {
		b = b[:1024]
	}
	return string(b)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}
