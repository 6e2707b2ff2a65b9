package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestMonoTime: monoTime builds what time.Now() returns (the layout of
// time.Time it relies on is Go's), and its readings behave as a process's
// own do across a wall-clock step.
func TestMonoTime(t *testing.T) {
	now := time.Now()
	g := (*goTime)(unsafe.Pointer(&now))
	if g.wall&hasMonotonic == 0 {
		t.Fatal("time.Now() has no monotonic reading in the layout monoTime assumes")
	}
	rebuilt := monoTime(now.Round(0), time.Duration(g.ext))
	if r := (*goTime)(unsafe.Pointer(&rebuilt)); r.wall != g.wall || r.ext != g.ext {
		t.Fatalf("monoTime rebuilt %x %d, time.Now() was %x %d", r.wall, r.ext, g.wall, g.ext)
	}

	before := monoTime(Epoch, time.Hour)
	// The wall clock steps back two minutes while a second passes.
	after := monoTime(Epoch.Add(-2*time.Minute+time.Second), time.Hour+time.Second)
	if d := after.Sub(before); d != time.Second {
		t.Errorf("a duration between two readings = %s, want 1s whatever the wall clock did", d)
	}
	if !before.Before(after) {
		t.Error("the later reading is not after the earlier one")
	}
	stored := before.Round(0) // as the API server keeps it
	if !after.Before(stored) || after.Sub(stored) != -2*time.Minute+time.Second {
		t.Errorf("a stored time compares by monotonic reading: %s", after.Sub(stored))
	}
	if !strings.Contains(after.String(), "m=+") || !stored.Equal(before) {
		t.Errorf("readings: %s, stored %s", after, stored)
	}
}

// TestStripMono: every time of a group, as the API server would keep it.
func TestStripMono(t *testing.T) {
	at := monoTime(Epoch, time.Hour)
	g := &v1alpha1.MysqlFailoverGroup{}
	g.CreationTimestamp = metav1.NewTime(at)
	g.Status.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(at)}
	g.Status.FailoverHistory = []v1alpha1.FailoverRecord{{Time: metav1.NewTime(at)}}
	stripMono(reflect.ValueOf(g))
	for _, got := range []time.Time{g.CreationTimestamp.Time, g.Status.LastFailover.Time.Time, g.Status.FailoverHistory[0].Time.Time} {
		if got != Epoch {
			t.Errorf("%#v kept its monotonic reading", got)
		}
	}
}
