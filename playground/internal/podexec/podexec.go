package podexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount binds Source (a file or directory on the host) at Target inside the
// container's private mount namespace.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Spec is what the helper needs to become the container's program.
type Spec struct {
	NetNS string   `json:"netns,omitempty"` // path such as /run/netns/x; empty keeps the current one
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir,omitempty"`
	// Mounts are applied in order of target depth, so a volume inside another
	// volume lands on top of it.
	Mounts []Mount `json:"mounts,omitempty"`
	// CreatedDirs is a file that records every directory made on the host to
	// serve as a mount point, one a line, so teardown can remove them.
	CreatedDirs string `json:"createdDirs,omitempty"`
}

// Write stores spec as JSON at path.
func Write(path string, spec Spec) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encode exec spec: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write exec spec: %w", err)
	}
	return nil
}

// Main reads the spec at path and replaces the process with the program. It
// returns only on failure.
func Main(path string) error {
	runtime.LockOSThread() // namespaces are per thread; exec from this one
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read exec spec: %w", err)
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("decode exec spec %s: %w", path, err)
	}
	if len(spec.Argv) == 0 {
		return errors.New("exec spec has no argv")
	}
	if err := enterNetNS(spec.NetNS); err != nil {
		return err
	}
	// Resolve and open the program and the record file before mounting:
	// the container's /tmp may hide both.
	name := spec.Argv[0]
	if strings.Contains(name, "/") && !filepath.IsAbs(name) && spec.Dir != "" {
		name = filepath.Join(spec.Dir, name) // relative to the working directory
	}
	prog, err := lookPath(name, spec.Env)
	if err != nil {
		return err
	}
	progFile, err := os.OpenFile(prog, unix.O_PATH, 0) // kept open across exec, for scripts
	if err != nil {
		return fmt.Errorf("open program: %w", err)
	}
	if len(spec.Mounts) > 0 {
		record, err := openRecord(spec.CreatedDirs)
		if err != nil {
			return err
		}
		if err := mountAll(spec, record); err != nil {
			return err
		}
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			return fmt.Errorf("chdir %s: %w", spec.Dir, err)
		}
	}
	fdPath := fmt.Sprintf("/proc/self/fd/%d", progFile.Fd())
	return fmt.Errorf("exec %s: %w", prog, unix.Exec(fdPath, spec.Argv, spec.Env))
}

func openRecord(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record mount points: %w", err)
	}
	return f, nil
}

func enterNetNS(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open netns: %w", err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter netns %s: %w", path, err)
	}
	return nil
}

func mountAll(spec Spec, record *os.File) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	// Nothing mounted here may leak back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	ms := append([]Mount(nil), spec.Mounts...)
	sort.SliceStable(ms, func(i, j int) bool { return depth(ms[i].Target) < depth(ms[j].Target) })
	// Open every source first: a mount (over /tmp, say) may hide later ones.
	srcs := make([]*os.File, len(ms))
	for i, m := range ms {
		f, err := os.OpenFile(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("volume source: %w", err)
		}
		defer f.Close()
		srcs[i] = f
	}
	for i, m := range ms {
		if err := bind(m, srcs[i], record); err != nil {
			return err
		}
	}
	return nil
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

func bind(m Mount, src *os.File, record *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return fmt.Errorf("volume source %s: %w", m.Source, err)
	}
	if err := makeTarget(m.Target, st.Mode&unix.S_IFMT == unix.S_IFDIR, record); err != nil {
		return err
	}
	from := fmt.Sprintf("/proc/self/fd/%d", src.Fd())
	if err := unix.Mount(from, m.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		if err := unix.Mount("", m.Target, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// makeTarget makes the mount point, recording each directory it had to make
// on the host so that teardown can remove it again.
func makeTarget(target string, dir bool, record *os.File) error {
	target = filepath.Clean(target)
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	parent := target
	if !dir {
		parent = filepath.Dir(target)
	}
	var made []string
	for p := parent; p != "/"; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("make mount point %s: %w", parent, err)
	}
	if !dir {
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("make mount point %s: %w", target, err)
		}
		f.Close()
		made = append([]string{target}, made...)
	}
	return recordDirs(record, made)
}

func recordDirs(record *os.File, made []string) error {
	if record == nil || len(made) == 0 {
		return nil
	}
	if _, err := record.WriteString(strings.Join(made, "\n") + "\n"); err != nil {
		return fmt.Errorf("record mount points: %w", err)
	}
	return nil
}

// lookPath resolves a program name the way a container runtime would: an
// absolute path as is, a bare name through the container's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w in PATH %s", name, exec.ErrNotFound, path)
}

// RemoveCreated removes the mount points listed in the record file, deepest
// first, leaving any that are not empty.
func RemoveCreated(record string) {
	b, err := os.ReadFile(record)
	if err != nil {
		return
	}
	paths := strings.Fields(string(b))
	sort.Slice(paths, func(i, j int) bool { return depth(paths[i]) > depth(paths[j]) })
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && !st.IsDir() && st.Size() == 0 {
			_ = os.Remove(p)
			continue
		}
		_ = unix.Rmdir(p) // fails harmlessly when not empty or gone
	}
}
