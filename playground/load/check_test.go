package load

import (
	"path/filepath"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// ack and fail build attempts lasting 10 ms from ms.
func ack(id int64, site string, ms int) Attempt {
	return Attempt{ID: id, Writer: "w0", Site: site, Start: at(ms), End: at(ms + 10), OK: true}
}

func fail(id int64, site string, ms int) Attempt {
	a := ack(id, site, ms)
	a.OK, a.Err = false, "read only"
	return a
}

func probe(a Attempt) Attempt { a.Writer = "probe"; return a }

func TestCheckLostAcknowledgedWrites(t *testing.T) {
	h := &History{
		Attempts:  []Attempt{ack(1, "a", 0), ack(2, "a", 20), fail(3, "a", 40), ack(4, "b", 60)},
		Final:     []int64{1, 3, 4}, // 3 failed but committed: not a loss; 2 is lost
		FinalRead: true,
	}
	r := Check(h, time.Second)
	if len(r.Lost) != 1 || r.Lost[0] != 2 || r.LostBySite["a"] != 1 {
		t.Fatalf("lost %v by site %v, want [2] on a", r.Lost, r.LostBySite)
	}
	if r.Acked != 3 || r.Failed != 1 {
		t.Errorf("acked %d failed %d, want 3 and 1", r.Acked, r.Failed)
	}
	h.FinalRead = false
	if r := Check(h, time.Second); r.Lost != nil {
		t.Errorf("lost %v without a final read", r.Lost)
	}
}

func TestCheckUnavailabilityWindows(t *testing.T) {
	h := &History{Attempts: []Attempt{
		ack(1, "a", 0), ack(2, "a", 100), fail(3, "a", 200), fail(4, "", 1500),
		ack(5, "b", 3100), ack(6, "b", 3200), ack(7, "b", 5000),
	}}
	r := Check(h, 500*time.Millisecond)
	if len(r.Windows) != 2 {
		t.Fatalf("windows %+v, want 2", r.Windows)
	}
	if w := r.Longest(); w.Duration != 3000*time.Millisecond || !w.From.Equal(at(110)) || !w.To.Equal(at(3110)) {
		t.Errorf("longest %+v, want 3 s from 110 ms", w)
	}
	if r.MaxWindow != 3*time.Second {
		t.Errorf("max window %s", r.MaxWindow)
	}
}

func TestCheckTwoWriters(t *testing.T) {
	clean := []Attempt{
		probe(ack(1, "a", 0)), probe(ack(2, "a", 100)), probe(fail(3, "a", 200)),
		probe(fail(4, "b", 0)), probe(fail(5, "b", 100)), probe(ack(6, "b", 300)), probe(ack(7, "b", 400)),
	}
	if r := Check(&History{Probes: clean}, time.Second); len(r.Overlaps) != 0 {
		t.Fatalf("clean handover: overlaps %v", r.Overlaps)
	}
	// b accepts a probe while a is certainly writable (a acks before and after).
	split := append(append([]Attempt(nil), clean...), probe(ack(8, "a", 500)), probe(ack(9, "a", 600)),
		probe(ack(10, "b", 550)))
	r := Check(&History{Probes: split}, time.Second)
	if len(r.Overlaps) == 0 {
		t.Fatal("a and b both writable around 550 ms: no overlap found")
	}
	// Both spans are evidence (b's span holds a's ack 8, a's span holds b's
	// ack 10); the one from a's point of view must be among them.
	found := false
	for _, o := range r.Overlaps {
		found = found || (o.Site == "a" && o.Other == "b" && o.At.ID == 10)
	}
	if !found {
		t.Errorf("overlaps %v: want a's span holding b's ack 10", r.Overlaps)
	}
	// A writer's ack on b inside a's span is evidence too.
	w := &History{Probes: clean[:2], Attempts: []Attempt{ack(11, "b", 40)}}
	if r := Check(w, time.Second); len(r.Overlaps) != 1 {
		t.Errorf("writer ack inside a's span: overlaps %v", r.Overlaps)
	}
	// An ack that only touches the span's edges proves nothing.
	edge := &History{Probes: clean[:2], Attempts: []Attempt{ack(12, "b", 5)}}
	if r := Check(edge, time.Second); len(r.Overlaps) != 0 {
		t.Errorf("ack straddling the span's start: overlaps %v", r.Overlaps)
	}
}

func TestCheckFirstAndLastAckBySite(t *testing.T) {
	h := &History{Attempts: []Attempt{ack(1, "a", 0), ack(2, "a", 50), ack(3, "b", 900)},
		Probes: []Attempt{probe(ack(4, "a", 120)), probe(ack(5, "b", 800))}}
	r := Check(h, time.Second)
	if r.LastAck["a"].ID != 4 || r.FirstAck["b"].ID != 5 || r.FirstAck["a"].ID != 1 {
		t.Errorf("first %v last %v", r.FirstAck, r.LastAck)
	}
}

func TestHistorySaveLoad(t *testing.T) {
	h := &History{Attempts: []Attempt{ack(1, "a", 0)}, Final: []int64{1}, FinalRead: true}
	h.Mark("kill", at(5))
	p := filepath.Join(t.TempDir(), "h.json")
	if err := h.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHistory(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attempts) != 1 || !got.Marks["kill"].Equal(at(5)) || !got.FinalRead {
		t.Errorf("round trip: %+v", got)
	}
}
