package scalebench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LagMetric is the operator's pass start lag histogram.
const LagMetric = "bloodraven_pass_start_lag_seconds"

// RequestsMetric counts the operator's requests to the API server
// (client-go, through controller-runtime's registry).
const RequestsMetric = "rest_client_requests_total"

// ScrapeSum is the sum of every series of a counter on a Prometheus text
// endpoint.
func ScrapeSum(addr, name string) (float64, error) {
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer func() { _ = resp.Body.Close() }()
	return sumCounter(resp.Body, name)
}

func sumCounter(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var sum float64
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("counter %s: bad line %q", name, line)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("counter %s: %w", name, err)
	}
	return sum, nil
}

// Histogram is one scrape of a histogram: cumulative counts by upper bound.
type Histogram struct {
	Bounds []float64 // ascending, +Inf last
	Counts []float64 // cumulative
}

// Scrape reads one histogram from a Prometheus text endpoint.
func Scrape(addr, name string) (Histogram, error) {
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		return Histogram{}, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer func() { _ = resp.Body.Close() }()
	return parseHistogram(resp.Body, name)
}

func parseHistogram(r io.Reader, name string) (Histogram, error) {
	type bucket struct{ le, n float64 }
	var bs []bucket
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	prefix := name + `_bucket{le="`
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		le, val, ok := strings.Cut(rest, `"} `)
		if !ok {
			return Histogram{}, fmt.Errorf("histogram %s: bad line %q", name, sc.Text())
		}
		b, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(val, 64)
		if err1 != nil || err2 != nil {
			return Histogram{}, fmt.Errorf("histogram %s: bad line %q", name, sc.Text())
		}
		bs = append(bs, bucket{b, n})
	}
	if err := sc.Err(); err != nil {
		return Histogram{}, fmt.Errorf("histogram %s: %w", name, err)
	}
	if len(bs) == 0 {
		return Histogram{}, fmt.Errorf("histogram %s: not exposed", name)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	var h Histogram
	for _, b := range bs {
		h.Bounds, h.Counts = append(h.Bounds, b.le), append(h.Counts, b.n)
	}
	return h, nil
}

// Sub is the observations made between an earlier scrape and h.
func (h Histogram) Sub(earlier Histogram) Histogram {
	out := Histogram{Bounds: h.Bounds, Counts: make([]float64, len(h.Counts))}
	for i := range h.Counts {
		out.Counts[i] = h.Counts[i]
		if i < len(earlier.Counts) {
			out.Counts[i] -= earlier.Counts[i]
		}
	}
	return out
}

// Total is the number of observations.
func (h Histogram) Total() float64 {
	if len(h.Counts) == 0 {
		return 0
	}
	return h.Counts[len(h.Counts)-1]
}

// Quantile estimates the q-quantile by linear interpolation inside its
// bucket (as Prometheus's histogram_quantile does); an answer in the +Inf
// bucket is the largest finite bound.
func (h Histogram) Quantile(q float64) float64 {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for i, b := range h.Bounds {
		if h.Counts[i] >= rank {
			if b > 1e300 { // +Inf
				return lower
			}
			in := h.Counts[i] - below
			if in == 0 {
				return b
			}
			return lower + (b-lower)*(rank-below)/in
		}
		lower, below = b, h.Counts[i]
	}
	return lower
}
