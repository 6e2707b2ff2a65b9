package grouploop

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/shipstream/bloodraven/apis/v1alpha1"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// fakeLock is a leader-election lock holding rec.
type fakeLock struct {
	rec resourcelock.LeaderElectionRecord
	err error
}

func (f *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r := f.rec
	return &r, nil, f.err
}
func (f *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (f *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (f *fakeLock) RecordEvent(string)                                              {}
func (f *fakeLock) Identity() string                                                { return "me" }
func (f *fakeLock) Describe() string                                                { return "ns/bloodraven" }

// TestMayMakeWritable: with a fake clock, a pass paused longer than the
// poll interval between observe and act may not make a site writable, nor
// may a process whose lock is held by another or has run out by its own
// record.
func TestMayMakeWritable(t *testing.T) {
	const poll = 2 * time.Second
	held := resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15,
		RenewTime: metav1.NewTime(t0.Add(-5 * time.Second))}
	cases := []struct {
		name  string
		act   time.Duration // when the step runs, after the snapshot
		lock  *fakeLock     // nil: leader election off
		allow bool
	}{
		{"fresh snapshot, leader election off", 100 * time.Millisecond, nil, true},
		{"fresh snapshot, lock held", 100 * time.Millisecond, &fakeLock{rec: held}, true},
		{"paused past the poll interval", poll + time.Millisecond, &fakeLock{rec: held}, false},
		{"paused past the poll interval, leader election off", 3 * poll, nil, false},
		{"lock held by another process", 100 * time.Millisecond,
			&fakeLock{rec: resourcelock.LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 15,
				RenewTime: metav1.NewTime(t0)}}, false},
		{"lock expired by its own record", 100 * time.Millisecond,
			&fakeLock{rec: resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15,
				RenewTime: metav1.NewTime(t0.Add(-20 * time.Second))}}, false},
		{"lock unreadable", 100 * time.Millisecond, &fakeLock{err: errors.New("apiserver down")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			clock := clockAt(func() time.Time { return now })
			env := &Env{Clock: clock}
			if c.lock != nil {
				env.Leader = authority.LockLeadership{Lock: c.lock, Now: clock.Now}
			}
			l := &Loop{env: env, interval: poll, observeStarted: t0.Add(-50 * time.Millisecond), observedAt: t0}
			now = t0.Add(c.act)
			err := l.mayMakeWritable(t.Context(), "iad", 0, time.Time{})
			if (err == nil) != c.allow {
				t.Fatalf("got %v, want allowed=%v", err, c.allow)
			}
			if err != nil && !errors.Is(err, failover.ErrMayNotMakeWritable) {
				t.Fatalf("error %v does not wrap ErrMayNotMakeWritable", err)
			}
		})
	}
}

// TestMayMakeWritableSidecarSilent: a site whose sidecar has not asked this
// operator for the view within two peerCheckIntervals (paused, or gone) is
// not made writable, with ErrSidecarSilent; once it asks, it may be.
func TestMayMakeWritableSidecarSilent(t *testing.T) {
	const poll, tick = 2 * time.Second, 2 * time.Second
	now := t0
	clock := clockAt(func() time.Time { return now })
	reg := authority.NewRegistry(clock.Now)
	key := types.NamespacedName{Namespace: "shop", Name: "orders"}
	l := &Loop{env: &Env{Clock: clock, Registry: reg}, key: key, interval: poll}
	ask := func() {
		reg.Serve(v1alpha1.ActiveSiteView{Namespace: key.Namespace, Group: key.Name, ActiveSite: "iad", Generation: 1}, "iad", nil)
	}
	check := func(at time.Duration) error {
		now = t0.Add(at)
		l.observeStarted, l.observedAt = now, now
		return l.mayMakeWritable(t.Context(), "iad", tick, time.Time{})
	}
	if err := check(0); !errors.Is(err, failover.ErrSidecarSilent) || !errors.Is(err, failover.ErrMayNotMakeWritable) {
		t.Fatalf("a sidecar that never asked: %v, want ErrSidecarSilent", err)
	}
	ask()
	if err := check(2 * tick); err != nil {
		t.Fatalf("asked two intervals ago: %v", err)
	}
	if err := check(2*tick + time.Millisecond); !errors.Is(err, failover.ErrSidecarSilent) {
		t.Fatalf("silent past two intervals: %v, want ErrSidecarSilent", err)
	}
	ask()
	if err := check(2*tick + time.Second); err != nil {
		t.Fatalf("asked again: %v", err)
	}
	// Two Pods of the site: the ask may have come from the other Pod's
	// sidecar (certificates name the site, not the Pod).
	reg.SawPods(key, "iad", []authority.PodRef{{UID: "old"}, {UID: "new"}})
	ask()
	if err := check(2*tick + 2*time.Second); !errors.Is(err, failover.ErrSidecarSilent) {
		t.Fatalf("two Pods listed: %v, want ErrSidecarSilent", err)
	}
	reg.SawPods(key, "iad", []authority.PodRef{{UID: "new"}})
	if err := check(2*tick + 2*time.Second); err != nil {
		t.Fatalf("one Pod again: %v", err)
	}
}
