package testbed

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RedisCluster is N independent redis-server instances on 127.0.0.1 (standing
// in for Dragonfly). Wire replication with REPLICAOF through a client.
type RedisCluster struct {
	bin   string
	mu    sync.Mutex
	nodes []*redisNode
	close sync.Once
}

type redisNode struct {
	index, port int
	dir, log    string
	proc        *process
}

func (n *redisNode) name() string { return fmt.Sprintf("redis-%d", n.index) }

// StartRedis starts n Redis servers for one test and stops them when it ends.
func StartRedis(t testing.TB, n int) *RedisCluster {
	t.Helper()
	c, err := NewRedis(t.TempDir(), n, t)
	if err != nil {
		t.Fatalf("start redis: %v", err)
	}
	return c
}

// NewRedis starts n Redis servers with their files under dir and registers
// their teardown with cl.
func NewRedis(dir string, n int, cl Cleaner) (*RedisCluster, error) {
	bin, err := findBinary("redis-server")
	if err != nil {
		return nil, err
	}
	c := &RedisCluster{bin: bin}
	cl.Cleanup(c.Close)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("redis-%d", i))
		cl.Cleanup(func() { _ = os.RemoveAll(d) })
		c.nodes = append(c.nodes, &redisNode{index: i, dir: d, log: filepath.Join(d, "redis.log")})
	}
	err = parallel(n, func(i int) error { return c.create(c.nodes[i]) })
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *RedisCluster) create(n *redisNode) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", n.name(), err)
	}
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		n.port = port
		err = c.boot(n)
		if err == nil || !errors.Is(err, errAddrInUse) || attempt == 3 {
			return err
		}
	}
}

func (c *RedisCluster) boot(n *redisNode) error {
	argv := []string{c.bin, "--port", strconv.Itoa(n.port), "--bind", Host, "--dir", n.dir,
		"--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"}
	p, err := startProcess(n.name(), n.log, argv)
	if err != nil {
		return err
	}
	n.proc = p
	if err := waitPong(net.JoinHostPort(Host, strconv.Itoa(n.port)), p, 30*time.Second); err != nil {
		p.kill()
		n.proc = nil
		if logSays(n.log, "Address already in use") {
			return fmt.Errorf("%s on port %d: %w", n.name(), n.port, errAddrInUse)
		}
		return fmt.Errorf("%s: %w\n%s", n.name(), err, tail(n.log, 15))
	}
	return nil
}

// waitPong polls until the server answers PING.
func waitPong(addr string, p *process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ping(addr)
		switch {
		case err == nil:
			return nil
		case p.exited():
			return fmt.Errorf("redis-server exited during start: %v", p.err)
		case time.Now().After(deadline):
			return fmt.Errorf("no PONG after %s: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("ping answered %q", strings.TrimSpace(line))
	}
	return nil
}

// Close kills every server; it also runs by itself at teardown.
func (c *RedisCluster) Close() {
	c.close.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range c.nodes {
			if n.proc != nil {
				n.proc.kill()
				n.proc = nil
			}
		}
	})
}

// N is the number of servers.
func (c *RedisCluster) N() int { return len(c.nodes) }

// Port is server i's port.
func (c *RedisCluster) Port(i int) int { return c.nodes[i].port }

// Addr is server i's "127.0.0.1:port".
func (c *RedisCluster) Addr(i int) string {
	return net.JoinHostPort(Host, strconv.Itoa(c.nodes[i].port))
}

// Kill sends SIGKILL to server i and waits for the exit.
func (c *RedisCluster) Kill(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.kill()
		c.nodes[i].proc = nil
	}
}

// Stop shuts server i down with SIGTERM (SIGKILL after 10 s).
func (c *RedisCluster) Stop(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.stop(10 * time.Second)
		c.nodes[i].proc = nil
	}
}

// Start boots a stopped server i again on its port; it comes back empty
// (nothing is persisted). Starting a running server does nothing.
func (c *RedisCluster) Start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[i]
	if n.proc != nil && !n.proc.exited() {
		return nil
	}
	return c.boot(n)
}

// Restart stops server i if it runs, then starts it again.
func (c *RedisCluster) Restart(i int) error {
	c.Stop(i)
	return c.Start(i)
}

// Pause stops server i with SIGSTOP: it keeps its connections but answers
// nothing (a replica stops acknowledging) until Resume.
func (c *RedisCluster) Pause(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.signal(syscall.SIGSTOP)
	}
}

// Resume continues a paused server i with SIGCONT.
func (c *RedisCluster) Resume(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.signal(syscall.SIGCONT)
	}
}
