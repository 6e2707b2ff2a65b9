package grouploop

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// seqMarks are the moments fence evidence about each site must postdate,
// on this process's view sequence (authority's registry_seq.go) rather than on a
// clock: a sidecar report counts only when it echoes a view served at or
// after them. They live in memory; a restarted operator has another id, so
// no report of an earlier process's views counts anyway.
type seqMarks struct {
	// failing is each failing site's current run of failed probes: its
	// first failure as the debouncer has it, and the mark taken when this
	// loop first saw that run.
	failing map[string]failMark
	// maybe is the mark taken when this loop first saw the site's
	// maybeWritable mark in status.
	maybe map[string]int64
}

type failMark struct {
	since time.Time // the run's identity: its first failure, as the debouncer reports it
	seq   int64
}

// noteFailures marks, after the pass's probes, the start of every new run
// of failed probes. The mark is taken after the probe that failed: views
// served before it, in the same pass or earlier, stay below it.
func (l *Loop) noteFailures(g *v1alpha1.MysqlFailoverGroup) {
	for _, s := range g.Spec.Sites {
		l.failSeq(s.Name)
	}
}

// failSeq is the mark of site's current run of failed probes, taken now
// when this loop had not seen the run before; zero when it is not failing.
func (l *Loop) failSeq(site string) int64 {
	if l.marks.failing == nil {
		l.marks.failing = map[string]failMark{}
	}
	since := l.failingSince(site)
	if since.IsZero() {
		delete(l.marks.failing, site)
		return 0
	}
	m, ok := l.marks.failing[site]
	if !ok || !m.since.Equal(since) {
		m = failMark{since: since, seq: l.env.Registry.SeqMark()}
		l.marks.failing[site] = m
	}
	return m.seq
}

// evidenceSeq is evidenceSince on the view sequence: the mark of the site's
// current run of failed probes or, when status records it maybe-writable,
// the mark taken when this loop first saw that, whichever is later.
// Evidence from before an operation that may have made the site writable
// says nothing about it.
func (l *Loop) evidenceSeq(g *v1alpha1.MysqlFailoverGroup, site string) int64 {
	if l.marks.maybe == nil {
		l.marks.maybe = map[string]int64{}
	}
	fail := l.failSeq(site)
	if !failover.MaybeWritable(&g.Status, site) {
		delete(l.marks.maybe, site)
		return fail
	}
	m, ok := l.marks.maybe[site]
	if !ok {
		m = l.env.Registry.SeqMark()
		l.marks.maybe[site] = m
	}
	return max(fail, m)
}
