package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

func writerLog(state string) string { return filepath.Join(state, "writer.log") }
func writerPID(state string) string { return filepath.Join(state, "writer.pid") }

// writerCmd is the writer process that demo starts: it writes through the
// group's DNS name until a signal, or until the cluster is gone.
func writerCmd(ctx context.Context, state string, args []string) error {
	fs := flag.NewFlagSet("writer", flag.ContinueOnError)
	ns := fs.String("namespace", "default", "namespace of the group")
	group := fs.String("group", "orders", "name of the group")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := localcluster.Attach(state)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // a writer without its cluster has nothing left to do
		for ctx.Err() == nil {
			if _, ok := localcluster.Running(state); !ok {
				fmt.Println("writer: the cluster is gone; exiting")
				cancel()
			}
			time.Sleep(time.Second)
		}
	}()
	w := install.Writer{Namespace: *ns, Group: *group, Out: os.Stdout}
	return w.Run(ctx, c)
}

// startWriter starts "playground writer" in its own session, logging to
// STATE/writer.log, and waits for its first acknowledged write.
func startWriter(ctx context.Context, o demoOpts) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("writer: %w", err)
	}
	logf, err := os.OpenFile(writerLog(o.state), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("writer log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(self, "--state", o.state, "writer", "--namespace", o.namespace, "--group", o.group)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start writer: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := os.WriteFile(writerPID(o.state), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return 0, fmt.Errorf("writer pid file: %w", err)
	}
	deadline := time.After(90 * time.Second)
	for {
		if b, _ := os.ReadFile(writerLog(o.state)); bytes.Contains(b, []byte(install.FirstAck)) {
			return pid, nil
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(writerLog(o.state))
			return 0, fmt.Errorf("writer exited (%v): %s", err, strings.TrimSpace(string(b)))
		case <-deadline:
			return 0, fmt.Errorf("writer: no acknowledged write within 90s; see %s", writerLog(o.state))
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runningWriter returns the PID of the writer started from state, if it runs.
func runningWriter(state string) (int, bool) {
	b, err := os.ReadFile(writerPID(state))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("\x00writer\x00")) {
		return 0, false // gone, or the PID now belongs to another process
	}
	return pid, true
}

// stopWriter ends the writer (SIGTERM, then SIGKILL after 5 s).
func stopWriter(state string) {
	defer os.Remove(writerPID(state))
	pid, ok := runningWriter(state)
	if !ok {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, ok := runningWriter(state); !ok {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// down stops the writer and the cluster; with -purge it also removes the
// state folder. With -purge, a missing cluster is not an error.
func down(state string, args []string) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	purge := fs.Bool("purge", false, "also remove the state folder (volumes, logs, kubeconfig)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	stopWriter(state)
	c, err := localcluster.Attach(state)
	switch {
	case err == nil:
		start := time.Now()
		if err := c.Down(); err != nil {
			return err
		}
		fmt.Printf("playground: down in %.1fs; no process, network namespace, nft table or mount left\n", time.Since(start).Seconds())
	case *purge:
		fmt.Printf("playground: no cluster runs from %s\n", state)
	default:
		return err
	}
	if *purge {
		return purgeState(state)
	}
	return nil
}

// purgeState removes a state folder, once it looks like one.
func purgeState(state string) error {
	abs, err := filepath.Abs(state)
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(abs, "supervisor.log")); err != nil || abs == "/" {
		return fmt.Errorf("%s does not look like a playground state folder (no supervisor.log): not removed", abs)
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("remove state folder: %w", err)
	}
	fmt.Printf("playground: removed %s\n", abs)
	return nil
}
