package sidecar

import (
	"testing"
	"time"
)

// Review of the sequence echo: the operator's wall clock steps back one
// hour while its views keep counting Seq up. The echo must follow Seq, or
// every report stays stale (never evidence) for that hour.
func TestEchoFollowsTheSequenceAcrossAClockStep(t *testing.T) {
	l, err := NewLoop(testSettings, t0)
	if err != nil {
		t.Fatal(err)
	}
	before := view("iad", 1, time.Hour)
	before.Seq = 10
	l.Tick(Observation{Now: t0, DB: DBReadOnly, Operator: op(before)})
	after := view("iad", 1, time.Second) // served later, observedAt one hour earlier
	after.Seq = 11
	l.Tick(Observation{Now: t0.Add(time.Second), DB: DBReadOnly, Operator: op(after)})
	if e := l.OperatorEcho(); e.Seq != 11 {
		t.Fatalf("echo Seq %d after the operator served Seq 11: the sidecar kept the pre-step view", e.Seq)
	}
}
