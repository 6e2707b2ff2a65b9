package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// fakeMysqld runs a process whose command name is mysqld (a copy of sleep),
// so that /proc says what it says of a real one, and returns its pid.
func fakeMysqld(t *testing.T) int {
	t.Helper()
	sleepBin, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("need sleep(1): %v", err)
	}
	body, err := os.ReadFile(sleepBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "mysqld")
	if err := os.WriteFile(bin, body, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func pidFile(t *testing.T, pid int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mysqld.pid")
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tcpAddrs returns an address that accepts connections and one that refuses them.
func tcpAddrs(t *testing.T) (open, refused string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused = l2.Addr().String()
	_ = l2.Close()
	return l.Addr().String(), refused
}

// TestClassifyDown is path 10 of issue 13: a status read that fails as if
// mysqld were gone (socket missing, connection refused) is down only when
// the process evidence agrees; otherwise it is unknown, which is fenced as
// writable and never reported to the operator as a confirmation.
func TestClassifyDown(t *testing.T) {
	open, refused := tcpAddrs(t)
	alive := pidFile(t, fakeMysqld(t))
	stale := pidFile(t, deadPID(t))
	notMysqld := pidFile(t, os.Getpid())
	missing := filepath.Join(t.TempDir(), "no.pid")
	socketMissing := fmt.Errorf("status: dial unix /run/mysqld/mysqld.sock: %w", syscall.ENOENT)
	connRefused := fmt.Errorf("status: dial tcp: %w", syscall.ECONNREFUSED)
	for _, tc := range []struct {
		name string
		p    Process
		err  error
		want DBState
	}{
		{"socket missing, mysqld alive by its pid file, TCP refused", Process{PIDFile: alive, TCPAddr: refused}, socketMissing, DBUnknown},
		{"socket missing, no pid file, TCP still serving", Process{PIDFile: missing, TCPAddr: open}, socketMissing, DBUnknown},
		{"socket missing, stale pid, TCP still serving", Process{PIDFile: stale, TCPAddr: open}, socketMissing, DBUnknown},
		{"socket missing, stale pid, TCP refused", Process{PIDFile: stale, TCPAddr: refused}, socketMissing, DBDown},
		{"socket missing, pid reused by another program, TCP refused", Process{PIDFile: notMysqld, TCPAddr: refused}, socketMissing, DBDown},
		{"socket missing, pid file removed, TCP refused", Process{PIDFile: missing, TCPAddr: refused}, socketMissing, DBDown},
		{"socket missing, no evidence configured", Process{}, socketMissing, DBUnknown},
		{"TCP refused, only TCP configured", Process{TCPAddr: refused}, connRefused, DBDown},
		{"TCP refused, mysqld alive (starting up)", Process{PIDFile: alive, TCPAddr: refused}, connRefused, DBUnknown},
		{"timeout, process gone", Process{PIDFile: stale, TCPAddr: refused}, fmt.Errorf("status: %w", context.DeadlineExceeded), DBUnknown},
		{"error answer, process gone", Process{PIDFile: stale, TCPAddr: refused}, errors.New("Error 1045: access denied"), DBUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{cfg: Config{Process: tc.p}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			got, _ := r.classify(context.Background(), mysql.Status{}, tc.err)
			if got != tc.want {
				t.Fatalf("classified %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("a read that answers is what it says", func(t *testing.T) {
		r := &Runner{cfg: Config{Process: Process{PIDFile: alive}}}
		if got, pid := r.classify(context.Background(), mysql.Status{}, nil); got != DBWritable || pid == 0 {
			t.Fatalf("writable read: %v pid %d", got, pid)
		}
		if got, _ := r.classify(context.Background(), mysql.Status{ReadOnly: true}, nil); got != DBReadOnly {
			t.Fatalf("read-only read: %v", got)
		}
	})
}
