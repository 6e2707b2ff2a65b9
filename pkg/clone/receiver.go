package clone

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Step is how far a Receiver has come; each is recorded in its Dir before
// the next may run, so a restarted process resumes where it stopped.
type Step string

// The steps, in order.
const (
	StepNone      Step = ""
	StepFetched   Step = "Fetched"
	StepPrepared  Step = "Prepared"
	StepInstalled Step = "Installed"
)

// Files the Receiver keeps in Dir.
const (
	stagingName    = "backup"     // the unpacked backup
	fetchedMarker  = "fetched"    // Fetch completed
	positionFile   = "position"   // Prepare completed; the GTID position
	installingMark = "installing" // Install began moving files
	installedMark  = "installed"  // Install completed
)

// Receiver seeds an empty datadir from a donor's stream, step by step
// (doc.go). Its Dir is its own: every file in it may be removed.
type Receiver struct {
	// URL is the donor's clone endpoint (its sidecar's peer URL plus PathClone).
	URL string
	// Source, when set, replaces URL and Client: Fetch unpacks what it
	// opens (a backup in an object store, pkg/backup).
	Source Source
	// Client makes the request: over the group's mutual TLS in a cluster.
	// It must carry no overall timeout shorter than a clone (use ctx).
	Client *http.Client
	// Dir holds the staging folder and the step markers.
	Dir string
	// DataDir is the receiving mysqld's datadir; mysqld must be stopped
	// while Install runs.
	DataDir string
	// DefaultsFile is the receiving mysqld's configuration, passed first to
	// mariadb-backup; empty passes --no-defaults.
	DefaultsFile string
	// Backup and Mbstream are the binaries (default from PATH).
	Backup, Mbstream string
	// UseMemory is --use-memory for the prepare (default mariadb-backup's).
	UseMemory string
	Logger    *slog.Logger
}

func (r *Receiver) staging() string      { return filepath.Join(r.Dir, stagingName) }
func (r *Receiver) file(n string) string { return filepath.Join(r.Dir, n) }

func (r *Receiver) has(n string) bool {
	_, err := os.Stat(r.file(n))
	return err == nil
}

func (r *Receiver) mark(n string, body []byte) error {
	tmp := r.file(n + ".tmp")
	if err := os.WriteFile(tmp, body, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.file(n))
}

func (r *Receiver) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

func (r *Receiver) bin(name, set string) string {
	if set != "" {
		return set
	}
	return name
}

func (r *Receiver) defaults() string {
	if r.DefaultsFile != "" {
		return "--defaults-file=" + r.DefaultsFile
	}
	return "--no-defaults"
}

// Done is the last step completed, as recorded in Dir.
func (r *Receiver) Done() Step {
	switch {
	case r.has(installedMark):
		return StepInstalled
	case r.has(positionFile):
		return StepPrepared
	case r.has(fetchedMarker):
		return StepFetched
	}
	return StepNone
}

// Reset removes Dir and everything in it (never the datadir).
func (r *Receiver) Reset() error {
	if err := os.RemoveAll(r.Dir); err != nil {
		return fmt.Errorf("clone: reset %s: %w", r.Dir, err)
	}
	return nil
}

// Seed runs every step still to do: Fetch, Prepare and Install. It returns
// the GTID position to join replication from.
func (r *Receiver) Seed(ctx context.Context) (string, error) {
	for _, step := range []func(context.Context) error{r.Fetch, r.Prepare, r.Install} {
		if err := step(ctx); err != nil {
			return "", err
		}
	}
	return r.Position()
}

// Fetch pulls the donor's stream into an empty staging folder. Done
// already, it does nothing; failing, it leaves no staging behind.
func (r *Receiver) Fetch(ctx context.Context) (err error) {
	if r.Done() != StepNone {
		return nil
	}
	if r.Dir == "" || (r.Source == nil && (r.URL == "" || r.Client == nil)) {
		return fmt.Errorf("%w: receiver needs Dir, and a Source or a URL and Client", ErrInvalidConfig)
	}
	if err := os.RemoveAll(r.staging()); err != nil {
		return fmt.Errorf("clone: clear staging: %w", err)
	}
	if err := os.MkdirAll(r.staging(), 0o700); err != nil {
		return fmt.Errorf("clone: staging: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(r.staging())
		}
	}()
	start := time.Now()
	pull, from := r.pull, r.URL
	if r.Source != nil {
		pull, from = r.pullSource, r.Source.String()
	}
	n, err := pull(ctx)
	if err != nil {
		return err
	}
	r.logger().Info("clone fetched", "bytes", n, "elapsed", time.Since(start), "from", from)
	return r.mark(fetchedMarker, nil)
}

// pull streams the donor's body into mbstream and checks the trailer.
func (r *Receiver) pull(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("clone: GET %s: %w", r.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return 0, fmt.Errorf("%w: %s: %s", ErrRefused, resp.Status, strings.TrimSpace(string(body)))
	}
	counted := &countingReader{r: resp.Body}
	cmd := exec.CommandContext(ctx, r.bin("mbstream", r.Mbstream), "-x", "-C", r.staging())
	cmd.WaitDelay = 5 * time.Second
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := runFed(cmd, counted); err != nil {
		if ctx.Err() != nil {
			return counted.n, fmt.Errorf("%w after %d bytes: %w", ErrStreamIncomplete, counted.n, context.Cause(ctx))
		}
		// A donor that failed mid-stream (its backup, its deadline) ends
		// the body early with an error trailer: say so rather than blame
		// the unpacking.
		if donor := donorResult(resp, 1<<20); donor != "" && donor != resultOK {
			return counted.n, fmt.Errorf("%w after %d bytes: donor says %s", ErrStreamIncomplete, counted.n, donor)
		}
		return counted.n, fmt.Errorf("%w: %w: %s", ErrExtract, err, strings.TrimSpace(string(stderr.bytes())))
	}
	// The trailer is there only once the body was read to its end.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return counted.n, fmt.Errorf("%w after %d bytes: %w", ErrStreamIncomplete, counted.n, err)
	}
	if got := resp.Trailer.Get(TrailerResult); got != resultOK {
		if got == "" {
			got = "no result trailer"
		}
		return counted.n, fmt.Errorf("%w after %d bytes: donor says %s", ErrStreamIncomplete, counted.n, got)
	}
	return counted.n, nil
}

// Source is a stream of a backup other than a donor's endpoint. Its reader
// must end with an error, not io.EOF, when what it read is not the whole
// backup it stands for (cut short, or failing a checksum).
type Source interface {
	Open(ctx context.Context) (io.ReadCloser, error)
	String() string
}

// pullSource unpacks what Source yields into the staging folder.
func (r *Receiver) pullSource(ctx context.Context) (int64, error) {
	rc, err := r.Source.Open(ctx)
	if err != nil {
		return 0, fmt.Errorf("clone: open %s: %w", r.Source, err)
	}
	defer func() { _ = rc.Close() }()
	counted := &countingReader{r: rc}
	cmd := exec.CommandContext(ctx, r.bin("mbstream", r.Mbstream), "-x", "-C", r.staging())
	cmd.WaitDelay = 5 * time.Second
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := runFed(cmd, counted); err != nil {
		return counted.n, fmt.Errorf("%w: %s after %d bytes: %w: %s", ErrExtract, r.Source, counted.n, err,
			strings.TrimSpace(string(stderr.bytes())))
	}
	return counted.n, nil
}

// donorResult reads what is left of the body, up to limit bytes, and
// returns the donor's result trailer ("" when the body goes on or has none).
func donorResult(resp *http.Response, limit int64) string {
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
	if err != nil || n == limit {
		return ""
	}
	return resp.Trailer.Get(TrailerResult)
}

// runFed runs cmd with src on its stdin through a large buffer: TLS hands
// the body over in records of 16 KiB, and writing each to the pipe on its
// own costs a system call per record.
func runFed(cmd *exec.Cmd, src io.Reader) error {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(stdin, copyBuffer)
	_, copyErr := bw.ReadFrom(src)
	if copyErr == nil {
		copyErr = bw.Flush()
	}
	closeErr := stdin.Close()
	waitErr := cmd.Wait()
	return errors.Join(waitErr, copyErr, closeErr)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Prepare makes the fetched backup consistent (mariadb-backup --prepare)
// and records its GTID position. Done already, it does nothing; failing, it
// removes the staging, so the next attempt starts from Fetch.
func (r *Receiver) Prepare(ctx context.Context) (err error) {
	switch r.Done() {
	case StepNone:
		return fmt.Errorf("%w: prepare before fetch", ErrOutOfOrder)
	case StepPrepared, StepInstalled:
		return nil
	}
	defer func() {
		if err != nil {
			_ = r.Reset()
		}
	}()
	args := []string{r.defaults(), "--prepare", "--target-dir=" + r.staging()}
	if r.UseMemory != "" {
		args = append(args, "--use-memory="+r.UseMemory)
	}
	if out, err := exec.CommandContext(ctx, r.bin("mariadb-backup", r.Backup), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %w: %s", ErrPrepare, err, tail(out, 2048))
	}
	pos, err := readPosition(r.staging())
	if err != nil {
		return err
	}
	return r.mark(positionFile, []byte(pos))
}

// Position is the GTID position the backup was taken at; ErrOutOfOrder
// before Prepare.
func (r *Receiver) Position() (string, error) {
	b, err := os.ReadFile(r.file(positionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no position before prepare", ErrOutOfOrder)
	}
	if err != nil {
		return "", fmt.Errorf("clone: position: %w", err)
	}
	return string(b), nil
}

// Install moves the prepared backup into DataDir, which must be empty
// (a lost+found folder aside): anything else there is refused with
// ErrDataDirNotEmpty and left alone. mysqld must be stopped. Done already,
// it does nothing. An Install that failed or was interrupted after it began
// moving files removes what it moved (the datadir was empty before it) and
// the staging, and returns ErrInstall: start again from Fetch.
func (r *Receiver) Install(ctx context.Context) (err error) {
	switch r.Done() {
	case StepInstalled:
		return nil
	case StepNone, StepFetched:
		return fmt.Errorf("%w: install before prepare", ErrOutOfOrder)
	}
	if r.has(installingMark) {
		return r.undoInstall(errors.New("an earlier install was interrupted"))
	}
	if err := os.MkdirAll(r.DataDir, 0o750); err != nil {
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	if err := checkEmpty(r.DataDir); err != nil {
		return err
	}
	if err := r.mark(installingMark, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	args := []string{r.defaults(), "--move-back", "--force-non-empty-directories",
		"--target-dir=" + r.staging(), "--datadir=" + r.DataDir}
	if out, err := exec.CommandContext(ctx, r.bin("mariadb-backup", r.Backup), args...).CombinedOutput(); err != nil {
		return r.undoInstall(fmt.Errorf("%w: %s", err, tail(out, 2048)))
	}
	if err := r.mark(installedMark, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	_ = os.RemoveAll(r.staging()) // what move-back left: nothing mysqld needs
	return nil
}

// undoInstall empties the datadir Install filled and resets the receiver.
func (r *Receiver) undoInstall(cause error) error {
	if err := clearDir(r.DataDir); err != nil {
		return fmt.Errorf("%w: %w; and clearing the partial datadir: %w", ErrInstall, cause, err)
	}
	if err := r.Reset(); err != nil {
		return fmt.Errorf("%w: %w; %w", ErrInstall, cause, err)
	}
	return fmt.Errorf("%w: %w (datadir emptied, start again from fetch)", ErrInstall, cause)
}

// checkEmpty refuses a datadir holding anything but lost+found.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	for _, e := range entries {
		if e.Name() != "lost+found" {
			return fmt.Errorf("%w: %s holds %s", ErrDataDirNotEmpty, dir, e.Name())
		}
	}
	return nil
}

// clearDir removes everything in dir but lost+found.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "lost+found" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
