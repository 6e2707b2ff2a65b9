package sim

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"time"
	"unsafe"
)

// The operator's own clock (FaultOperatorClock). A Go process reads two
// clocks at once: time.Now() carries the wall clock and a monotonic
// reading. Stepping the wall clock (NTP, an administrator, a VM resumed)
// leaves the monotonic reading going on, so a duration between two of the
// process's own readings (t2.Sub(t1), t1.Before(t2)) does not see the
// step. A time that lost its monotonic reading (sent to the API server and
// read back, rendered to JSON, or stripped with Round(0) or Rfc3339Copy)
// compares by wall clock, so comparing it with a reading taken after the
// step does see it: a persisted step time, a failover's record, the
// leader lock's renewTime written by this process.
//
// The sim's operator clock therefore hands out times that carry both: the
// wall clock off by the run's operator skew, the monotonic reading the
// world's time. The API server keeps no monotonic reading (stripMono on
// every group the sim's fast paths read or write; the fake client renders
// everything else to JSON), and the views the operator serves reach the
// sidecars as JSON.

// monoBase is the monotonic reading at the world's epoch: any positive
// value, since only differences of readings mean anything.
const monoBase = time.Hour

// goTime is time.Time's layout in Go's runtime (src/time/time.go): with
// hasMonotonic set, wall holds 33 bits of seconds since 1885 and 30 bits
// of nanoseconds, and ext the monotonic reading in nanoseconds.
// TestMonoTime fails if that layout changes.
type goTime struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

const (
	hasMonotonic = 1 << 63
	nsecShift    = 30
)

// wall1885 is where the wall field's seconds count from.
var wall1885 = time.Date(1885, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

// monoTime returns what time.Now() would return on a machine whose wall
// clock reads wall (UTC, between 1885 and 2157) and whose monotonic clock
// reads mono.
func monoTime(wall time.Time, mono time.Duration) time.Time {
	var t time.Time
	g := (*goTime)(unsafe.Pointer(&t))
	g.wall = hasMonotonic | uint64(wall.Unix()-wall1885)<<nsecShift | uint64(wall.Nanosecond())
	g.ext = int64(mono)
	return t
}

// opTime is the operator's time.Now() at world time now: its wall clock
// off by the operator skew, its monotonic reading the world's.
func (r *realOperator) opTime(now time.Time) time.Time {
	return monoTime(now.Add(time.Duration(r.skew)*StepDuration), now.Sub(Epoch)+monoBase)
}

// stepClock sets the operator's wall clock by steps off the world's from
// now on: every replica's (one node, or one NTP source stepping them all).
func (r *realOperator) stepClock(by int) {
	r.skew = by
	r.clk.SetTime(r.opTime(r.w.now()))
}

var timeType = reflect.TypeFor[time.Time]()

// stripMono drops the monotonic reading of every time.Time reachable from
// v (a pointer), as storing an object in the API server does.
func stripMono(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripMono(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if v.CanSet() {
				v.Set(reflect.ValueOf(v.Interface().(time.Time).Round(0)))
			}
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				stripMono(f)
			}
		}
	case reflect.Slice, reflect.Array:
		if k := v.Type().Elem().Kind(); k == reflect.String || k <= reflect.Complex128 {
			return // no times in there
		}
		for i := range v.Len() {
			stripMono(v.Index(i))
		}
	case reflect.Map:
		// The group holds no times in maps (labels and annotations).
	}
}

// drawOperatorClock adds steps of the operator's wall clock to s, every 60
// to 300 steps: up to a minute and a half either way, one in four back to
// the right time. They are drawn after every other fault, from the same
// generator, so that adding the kind left every other fault of every seed
// as it was.
func drawOperatorClock(rng *rand.Rand, c Config, s Schedule) Schedule {
	for at := 30 + rng.IntN(200); at < c.Steps-30; at += 60 + rng.IntN(240) {
		f := Fault{At: at, Kind: FaultOperatorClock, Site: Primary, By: rng.IntN(181) - 90}
		if rng.IntN(4) == 0 {
			f.By = 0
		}
		s = append(s, f)
	}
	slices.SortStableFunc(s, func(a, b Fault) int { return a.At - b.At })
	return s
}
