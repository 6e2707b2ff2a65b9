package sim

import (
	"testing"
	"time"
)

// TestSideClock: waits inside a call move the process's clock on at once;
// a callback timer passed during a call runs after it (settle), even when
// the call stopped it after it fired; one stopped before it fired never
// runs; the wall reading carries the site's skew, the monotonic one not.
func TestSideClock(t *testing.T) {
	s := &site{}
	c := newSideClock(s, Epoch.Add(10*time.Second))
	start := c.Now()
	var ran []string
	early := c.AfterFunc(300*time.Millisecond, func() { ran = append(ran, "early") })
	late := c.AfterFunc(time.Hour, func() { ran = append(ran, "late") })
	<-c.NewTimer(500 * time.Millisecond).C() // a wait: over at once
	if got := c.Since(start); got != 500*time.Millisecond {
		t.Fatalf("after a 500 ms wait the clock moved %s", got)
	}
	if early.Stop() {
		t.Fatal("a timer that fired during the wait was stopped")
	}
	if !late.Stop() {
		t.Fatal("a timer not yet due could not be stopped")
	}
	if len(ran) != 0 {
		t.Fatalf("callbacks ran inside the call: %v", ran)
	}
	c.runFired()
	c.toMono(2 * time.Hour)
	c.runFired()
	if len(ran) != 1 || ran[0] != "early" {
		t.Fatalf("callbacks run: %v, want only the one that fired", ran)
	}
	c.to(start) // never back
	if c.Since(start) <= 0 {
		t.Fatal("the clock went back")
	}
	before := c.Now()
	s.skew = 30
	if now := c.Now(); now.Sub(before) != 0 || now.Round(0).Sub(before.Round(0)) != 30*time.Second {
		t.Fatalf("skew: monotonic moved %s, wall %s; want 0 and 30s", now.Sub(before), now.Round(0).Sub(before.Round(0)))
	}
}
