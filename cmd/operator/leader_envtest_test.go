//go:build envtest

package main

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/shipstream/bloodraven/internal/testbed"
)

var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

// elect runs leader election as the manager does (15 s lease) under
// identity, and returns a channel closed once it leads and its stop.
func elect(t *testing.T, f flags, release bool) (<-chan struct{}, context.CancelFunc) {
	t.Helper()
	lock, err := newLeaderLock(cp.Config, f)
	if err != nil {
		t.Fatal(err)
	}
	leading := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{Lock: lock,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 500 * time.Millisecond,
		ReleaseOnCancel: release, Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(leading) }, OnStoppedLeading: func() {}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); le.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return leading, stop
}

func leadsWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestRestartedOperatorLeadsAtOnce: a process restarted in the same Pod
// (the same identity) takes its Lease back at once, though the crashed one
// never released it; a process of another Pod waits while it is held, and
// leads at once when the holder stops gracefully and hands it back.
func TestRestartedOperatorLeadsAtOnce(t *testing.T) {
	ns := "leader-test"
	if err := cp.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	podA := flags{leaderElectionNS: ns, leaderElectionID: "bloodraven", leaderIdentity: "bloodraven-7d9f-a"}
	podB := podA
	podB.leaderIdentity = "bloodraven-7d9f-b"

	first, crash := elect(t, podA, false)
	if !leadsWithin(first, 10*time.Second) {
		t.Fatal("the first operator never led")
	}
	crash() // no release: the Lease stays held for 15 s
	restarted, stopGracefully := elect(t, podA, true)
	if !leadsWithin(restarted, 3*time.Second) {
		t.Fatal("the operator restarted in its own Pod waited for its own Lease to expire")
	}
	other, _ := elect(t, podB, false)
	if leadsWithin(other, 3*time.Second) {
		t.Fatal("another Pod led while the Lease was held")
	}
	stopGracefully()
	if !leadsWithin(other, 5*time.Second) {
		t.Fatal("another Pod did not lead at once after the holder handed the Lease back")
	}
}

// TestLeaderIdentity: the Pod's name when given; outside a Pod, each
// process its own.
func TestLeaderIdentity(t *testing.T) {
	if id, err := leaderIdentity(flags{leaderIdentity: "bloodraven-7d9f-a"}); err != nil || id != "bloodraven-7d9f-a" {
		t.Fatalf("given: %q %v", id, err)
	}
	a, _ := leaderIdentity(flags{})
	b, _ := leaderIdentity(flags{})
	if a == "" || a == b {
		t.Fatalf("outside a Pod: %q and %q", a, b)
	}
}
