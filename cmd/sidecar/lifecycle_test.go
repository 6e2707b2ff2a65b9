package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func TestParseOptionsLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		stop, start time.Duration
		appUser     string
	}{
		{"defaults", nil, 30 * time.Second, 30 * time.Second, ""},
		{"as rendered", []string{"-stop-delay", "45s", "-start-delay", "10m", "-app-login-user", "app"},
			45 * time.Second, 10 * time.Minute, "app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-site", "iad", "-group", "orders", "-operator-url", "http://op:8443"}, tc.args...)
			o, err := parseOptions(args, env(nil), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.sidecar.StopDelay != tc.stop || o.sidecar.StartDelay != tc.start || o.appLoginUser != tc.appUser {
				t.Fatalf("stop %s start %s app user %q", o.sidecar.StopDelay, o.sidecar.StartDelay, o.appLoginUser)
			}
		})
	}
	if _, err := parseOptions([]string{"-site", "iad", "-group", "orders", "-operator-url", "http://op:8443",
		"-stop-delay", "soon"}, env(nil), io.Discard); err == nil {
		t.Fatal("-stop-delay soon accepted")
	}
}

// refuseAll verifies no view; the test needs none.
type refuseAll struct{}

func (refuseAll) Verify(v1alpha1.ActiveSiteView) error { return errors.New("no keys in this test") }

// goneDB is a mysqld that is already down: a termination has nothing to stop.
type goneDB struct{}

func (goneDB) Status(context.Context) (mysql.Status, error) {
	return mysql.Status{}, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
}
func (goneDB) Fence(context.Context) error { return fmt.Errorf("dial: %w", syscall.ECONNREFUSED) }

// TestSIGTERMRunsTheTermination: SIGTERM runs the termination and then
// ends the sidecar's context; a second SIGTERM joins it instead of
// killing the process.
func TestSIGTERMRunsTheTermination(t *testing.T) {
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 3 * time.Second, PeerCheckInterval: time.Second, Keys: refuseAll{}},
		OperatorURL: "http://127.0.0.1:1", StopDelay: 5 * time.Second}, goneDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := onSignals(r, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	for range 2 {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context did not end after SIGTERM")
	}
	time.Sleep(100 * time.Millisecond) // let the second signal land while still caught
	st := r.Status().Termination
	if st == nil || st.How != sidecar.TermGone {
		t.Fatalf("termination %+v, want one that found mysqld gone", st)
	}
}
