package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/podexec"
)

// setupNetwork makes the core namespace: its loopback carries the control
// plane's and every node's address, it forwards between Pods, and Service
// addresses route into it so the proxy's DNAT applies to local clients too.
func (s *Supervisor) setupNetwork(ctx context.Context) error {
	ns := s.cfg.ClusterID
	if err := writeMarker(ns); err != nil {
		return err
	}
	if err := nsutil.Create(ctx, ns); err != nil {
		return err
	}
	cmds := []string{}
	for _, ip := range []string{APIServerIP, ClientIP, ClusterDNSIP, BindIP} {
		cmds = append(cmds, fmt.Sprintf("addr add %s/32 dev lo", ip))
	}
	s.info.Sites = map[string]string{}
	for _, st := range s.cfg.sites() {
		cmds = append(cmds, fmt.Sprintf("addr add %s/32 dev lo", st.nodeIP))
		s.info.Sites[st.name] = st.cidr.String()
	}
	cmds = append(cmds, fmt.Sprintf("route add %s dev lo", ServiceCIDR))
	if err := nsutil.IPBatch(ctx, ns, cmds); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1").CombinedOutput()
	if err != nil {
		return fmt.Errorf("enable forwarding: %w: %s", err, out)
	}
	s.info.NetNS = ns
	return s.forwardAPI()
}

// forwardAPI listens on the host's loopback and relays to the API server
// inside the core namespace, so host tools need no route into it.
func (s *Supervisor) forwardAPI() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for API forward: %w", err)
	}
	s.info.Server = "https://" + l.Addr().String()
	target := net.JoinHostPort(APIServerIP, fmt.Sprint(APIPort))
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go relay(s.ctx, c, s.cfg.ClusterID, target)
		}
	}()
	s.stopFwd = func() { l.Close() }
	return nil
}

func relay(ctx context.Context, c net.Conn, netns, target string) {
	defer c.Close()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	up, err := nsutil.Dial(dctx, netns, "tcp", target)
	cancel()
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Cleanup removes everything a cluster may have left outside its state
// folder: processes and namespaces (Pod ones first), the etcd data on
// tmpfs, and mount points made on the host. It is safe to call repeatedly.
func Cleanup(clusterID, stateDir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := nsutil.List(clusterID)
	for _, n := range names {
		nsutil.KillAll(ctx, n)
	}
	for _, n := range names {
		if n != clusterID {
			_ = nsutil.Delete(ctx, n)
		}
	}
	_ = nsutil.Delete(ctx, clusterID)
	_ = os.RemoveAll(filepath.Join("/dev/shm", clusterID+"-etcd"))
	_ = os.Remove(filepath.Join(markerDir, clusterID))
	removeCreatedDirs(clusterID)
	if stateDir != "" {
		_ = os.Remove(filepath.Join(stateDir, SocketFile))
		_ = os.Remove(filepath.Join(stateDir, InfoFile))
	}
}

// NetNSPrefix starts the name of every cluster's namespaces.
const NetNSPrefix = "brlc-"

// markerDir holds one file per running cluster with its supervisor's PID,
// so a later Up can remove clusters whose supervisor died, and the record
// of mount points made on the host, shared by every cluster.
const (
	markerDir       = "/run/bloodraven-localcluster"
	createdDirsFile = markerDir + "/created-dirs"
)

// removeCreatedDirs removes the mount points that containers made on the
// host once no other cluster runs: removing a folder that is a mount point
// in another cluster's container would detach that mount.
func removeCreatedDirs(self string) {
	for _, n := range nsutil.List(NetNSPrefix) {
		if n != self && len(n) == len(NetNSPrefix)+6 {
			return // the last cluster to go removes them
		}
	}
	podexec.RemoveCreated(createdDirsFile)
	_ = os.Remove(createdDirsFile)
}

func writeMarker(id string) error {
	if err := os.MkdirAll(markerDir, 0o755); err != nil {
		return fmt.Errorf("marker folder: %w", err)
	}
	return os.WriteFile(filepath.Join(markerDir, id), []byte(fmt.Sprint(os.Getpid())), 0o644)
}

// CleanupStale removes clusters whose supervisor is gone (killed with
// SIGKILL, say); their processes died with it, their namespaces did not.
// It returns the IDs it removed.
func CleanupStale() []string {
	var removed []string
	for _, n := range nsutil.List(NetNSPrefix) {
		if len(n) != len(NetNSPrefix)+6 { // Pod namespaces go with their cluster
			continue
		}
		b, err := os.ReadFile(filepath.Join(markerDir, n))
		var pid int
		if err == nil {
			_, _ = fmt.Sscan(string(b), &pid)
		}
		if Alive(pid) {
			continue
		}
		Cleanup(n, "")
		removed = append(removed, n)
	}
	return removed
}

// Alive reports whether pid runs; a zombie (dead, not yet reaped by a
// parent that may never reap it) counts as dead.
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || len(b) < i+3 || b[i+2] != 'Z'
}
