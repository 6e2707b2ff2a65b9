//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

// One cluster serves every test of the package; TestZCleanup, which runs
// last, takes it down and checks that nothing is left.
var (
	shared     *localcluster.Cluster
	sharedErr  error
	sharedOnce sync.Once
	anyFailed  bool // then Down keeps the state folder for its logs
)

func TestMain(m *testing.M) {
	localcluster.Init()
	code := m.Run()
	if shared != nil { // TestZCleanup did not run
		shared.KeepStateOnDown()
		_ = shared.Down()
		fmt.Fprintf(os.Stderr, "localcluster state kept in %s\n", shared.StateDir)
	}
	os.Exit(code)
}

// cluster returns the shared cluster, starting it on first use. A missing
// prerequisite fails the test: this tier never skips.
func cluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		shared, sharedErr = localcluster.Up(ctx, localcluster.Options{Progress: testWriter{t}})
		if sharedErr == nil {
			t.Logf("cluster up in %.1fs, KUBECONFIG=%s", time.Since(start).Seconds(), shared.Kubeconfig())
		}
	})
	if sharedErr != nil {
		t.Fatalf("localcluster.Up: %v", sharedErr)
	}
	if shared == nil {
		t.Fatal("the shared cluster is already down")
	}
	t.Cleanup(func() {
		if t.Failed() {
			anyFailed = true
		}
	})
	return shared
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
