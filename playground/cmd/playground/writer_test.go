package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestPurgeState(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "not-a-state-folder")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := purgeState(other); err == nil {
		t.Error("a folder without supervisor.log was removed")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the folder is gone: %v", err)
	}
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(filepath.Join(state, "nodes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "supervisor.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := purgeState(state); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state folder still there: %v", err)
	}
	if err := purgeState(state); err != nil {
		t.Errorf("a missing folder: %v", err)
	}
}

func TestRunningWriterChecksTheProcess(t *testing.T) {
	state := t.TempDir()
	if _, ok := runningWriter(state); ok {
		t.Error("a writer without a pid file")
	}
	// This test process is no writer, whatever its PID file says.
	if err := os.WriteFile(writerPID(state), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := runningWriter(state); ok {
		t.Error("the test process was taken for a writer")
	}
}
