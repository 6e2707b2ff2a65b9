package nsutil

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Path returns the bind-mount path of the named network namespace.
func Path(name string) string { return filepath.Join("/run/netns", name) }

// IP runs ip(8) with args and returns a wrapped error holding its output.
func IP(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// IPBatch runs several ip(8) commands in one process, inside netns when set.
func IPBatch(ctx context.Context, netns string, cmds []string) error {
	args := []string{"-batch", "-"}
	if netns != "" {
		args = append([]string{"-n", netns}, args...)
	}
	c := exec.CommandContext(ctx, "ip", args...)
	c.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip -n %s -batch (%s): %w: %s", netns, strings.Join(cmds, "; "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Create adds the named netns and brings its loopback up. It fails when the
// namespace exists already.
func Create(ctx context.Context, name string) error {
	if err := IP(ctx, "netns", "add", name); err != nil {
		return err
	}
	return IP(ctx, "-n", name, "link", "set", "lo", "up")
}

// Delete removes the named netns after killing every process still inside
// it. A missing namespace is not an error.
func Delete(ctx context.Context, name string) error {
	if _, err := os.Stat(Path(name)); os.IsNotExist(err) {
		return nil
	}
	KillAll(ctx, name)
	return IP(ctx, "netns", "del", name)
}

// Pids lists the processes that live in the named netns.
func Pids(ctx context.Context, name string) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", name).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var p int
		if _, err := fmt.Sscan(f, &p); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// KillAll sends SIGKILL to every process in the named netns.
func KillAll(ctx context.Context, name string) {
	for _, p := range Pids(ctx, name) {
		_ = unix.Kill(p, unix.SIGKILL)
	}
}

// List returns the names of the network namespaces that start with prefix.
func List(prefix string) []string {
	ents, _ := os.ReadDir("/run/netns")
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// Do runs fn on a locked OS thread that has entered the named netns, then
// moves the thread back. Sockets made inside fn stay in that namespace.
func Do(name string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open own netns: %w", err)
	}
	defer orig.Close()
	target, err := os.Open(Path(name))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", name, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it dies with this goroutine instead of
		// serving others from the wrong namespace.
		return fmt.Errorf("leave netns %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Dial opens a connection from inside the named netns.
func Dial(ctx context.Context, name, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := Do(name, func() error {
		// The socket is made on this thread; connecting may continue elsewhere.
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		conn = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s %s in netns %s: %w", network, addr, name, err)
	}
	return conn, nil
}

// Listen opens a listener inside the named netns.
func Listen(name, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := Do(name, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen %s %s in netns %s: %w", network, addr, name, err)
	}
	return l, nil
}

// ListenPacket opens a packet listener inside the named netns.
func ListenPacket(name, network, addr string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := Do(name, func() error {
		var err error
		pc, err = net.ListenPacket(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen %s %s in netns %s: %w", network, addr, name, err)
	}
	return pc, nil
}
