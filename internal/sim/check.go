package sim

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// The invariants.
const (
	InvariantOneWriter   = "one-writer"          // never two writable sites
	InvariantPlannedLoss = "planned-no-loss"     // a planned target holds every transaction of its fenced source
	InvariantNoRejoin    = "no-diverged-rejoin"  // discarded transactions never come back
	InvariantTruthful    = "truthful-divergence" // a site marked divergent truly holds what it is marked for
	// InvariantForgedAccepted: a report without its site's certificate was answered.
	InvariantForgedAccepted = "forged-report-refused"
)

// maxViolations bounds how many violations one run records.
const maxViolations = 20

// Violation is one broken invariant.
type Violation struct {
	Step      int
	Invariant string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("t=%04d VIOLATION %s: %s", v.Step, v.Invariant, v.Detail)
}

// checker watches the ground truth: the world's actual state, not what the
// operator believes.
type checker struct {
	w *World
	// discarded holds every transaction that was acknowledged somewhere but
	// that a newly writable site did not have: the history dropped it.
	discarded  gtid.Set
	violations []Violation
	real       realChecks
	hist       []history // freshest.go
}

func newChecker(w *World) *checker { return &checker{w: w} }

func (c *checker) violate(invariant, detail string) {
	if len(c.violations) < maxViolations {
		v := Violation{Step: c.w.step, Invariant: invariant, Detail: detail}
		c.violations = append(c.violations, v)
		c.w.trace = append(c.w.trace, v.String())
	}
}

func (c *checker) writers() []string {
	var out []string
	for _, s := range c.w.sites {
		if s.acceptsWrites(c.w.step) {
			out = append(out, s.name)
		}
	}
	return out
}

// atCommit checks that the site acknowledging a client write is the only
// one that accepts writes: two writers are a violation even when one of
// them is fenced before the step ends.
func (c *checker) atCommit(s *site) {
	if ws := c.writers(); len(ws) > 1 {
		c.violate(InvariantOneWriter, fmt.Sprintf("%s acknowledged a write while writable: %s", s.name, strings.Join(ws, ", ")))
	}
}

// afterStep checks that at most one site writes, and that no site replicating
// from the active site holds a transaction the active site lacks.
func (c *checker) afterStep() {
	ws := c.writers()
	c.w.stats.Steps++
	if len(ws) > 0 {
		c.w.stats.WriterSteps++
	}
	if len(ws) > 1 {
		c.violate(InvariantOneWriter, "writable: "+strings.Join(ws, ", "))
	}
	if r, ok := c.w.op.(*realOperator); ok {
		c.checkReal(r)
		c.noteHistory()
	}
	active, ok := c.w.siteByName(c.w.op.persisted().ActiveSite)
	if !ok {
		return // no active site: the authority was lost, nobody may be a replica of it
	}
	for _, s := range c.w.sites {
		if s == active || !s.pod || !s.db.up || !s.db.replicating || s.db.source != active.idx {
			continue
		}
		if !active.db.executed.contains(s.db.executed) && !c.tailLostBy(active, s) {
			c.violate(InvariantNoRejoin, fmt.Sprintf("%s %v replicates from active %s %v", s.name, s.db.executed, active.name, active.db.executed))
		}
	}
}

// beforeUnfence checks the site about to become writable: it holds no
// discarded transaction, and a planned target holds all of its source's.
func (c *checker) beforeUnfence(s *site) {
	got := s.db.executed.set(c.w.uuids)
	if back := got.Subtract(got.Subtract(c.discarded)); !back.IsEmpty() {
		c.violate(InvariantNoRejoin, fmt.Sprintf("%s made writable holding discarded transactions %s", s.name, back))
	}
	p := c.w.op.persisted().Planned
	if p == nil || p.Phase != v1alpha1.PhasePromoting || p.Target != s.name {
		return
	}
	src, _ := c.w.siteByName(p.Source)
	if lost := src.db.executed.set(c.w.uuids).Subtract(got); !lost.IsEmpty() {
		c.violate(InvariantPlannedLoss, fmt.Sprintf("planned %s -> %s loses %d acknowledged transactions %s",
			p.Source, p.Target, lost.Count(), lost))
	}
}

// afterUnfence checks the one-writer invariant at once, and records what the
// new writer lacks as discarded.
func (c *checker) afterUnfence(s *site) {
	c.notePromotion(s)
	c.checkFreshest(s)
	if ws := c.writers(); len(ws) > 1 {
		c.violate(InvariantOneWriter, fmt.Sprintf("%s unfenced while writable: %s", s.name, strings.Join(ws, ", ")))
	}
	all := make(txs, len(c.w.sites))
	for _, o := range c.w.sites {
		all.raise(o.db.executed)
	}
	lacks := all.set(c.w.uuids).Subtract(s.db.executed.set(c.w.uuids))
	if c.unanswered(s) {
		// The operator did not see this promotion succeed (its answer was
		// lost): it may abandon it and promote another site, whose history
		// then stands. What s lacks is discarded only if s's promotion
		// stands (noteStanding).
		c.real.provisional, c.real.provisionalSite = lacks, s.name
		c.real.provisionalGen = c.w.op.persisted().Generation
		return
	}
	if c.real.provisionalSite == s.name {
		c.real.provisionalSite = "" // promoted again: its history stands
		c.discarded = c.discarded.Union(c.real.provisional)
	}
	c.real.provisionalSite = ""
	c.discarded = c.discarded.Union(lacks)
}

// prune forgets discarded transactions no site holds any more (after a
// reclone wiped them): their GTIDs may be reused by new transactions.
func (c *checker) prune() {
	all := make(txs, len(c.w.sites))
	for _, o := range c.w.sites {
		all.raise(o.db.executed)
	}
	held := all.set(c.w.uuids)
	c.discarded = c.discarded.Subtract(c.discarded.Subtract(held))
}
