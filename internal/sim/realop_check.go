package sim

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Invariants only the real operator's runs check.
const (
	// InvariantGeneration: the persisted topology generation never goes back.
	InvariantGeneration = "generation-monotonic"
	// InvariantLossReported: a failover's transactionsLost, once reported,
	// counts exactly the acknowledged transactions of the old primary the
	// new one did not hold when it was made writable.
	InvariantLossReported = "loss-reported-exactly"
	// InvariantGTIDReuse: no server commits a transaction under a GTID an
	// acknowledged transaction had before a power loss took it back
	// (durability.go).
	InvariantGTIDReuse = "no-gtid-reuse"
)

// realChecks is the checker's state for the real operator's invariants.
type realChecks struct {
	generation int64
	// promotedWith is each site's executed set when it was last made
	// writable; checked records the failovers whose loss was checked.
	promotedWith map[string]gtid.Set
	checked      map[int64]bool
	// provisional is what provisionalSite lacked when an ambiguous
	// promotion made it writable: discarded once a completed failover to
	// it is recorded, forgotten when another site is made writable first.
	provisional     gtid.Set
	provisionalSite string
	provisionalGen  int64
	// dur is what reached each mysqld's disk (durability.go).
	dur durability
	// marked is each site's divergentGtid the checker last verified.
	marked map[string]string
}

// unanswered reports whether the real operator loses the answer of the
// call that makes s writable at this step, as simInstance reads it: the
// site's answers are lost (lossy-replies), or what it sends the operator
// is (drop-one-way). Either way the call times out after taking effect.
func (c *checker) unanswered(s *site) bool {
	if _, ok := c.w.op.(*realOperator); !ok {
		return false
	}
	return s.lossy(c.w.step) || !c.w.net.sends(s.idx, c.w.operatorNode(), c.w.step)
}

// notePromotion remembers what s held when it became writable.
func (c *checker) notePromotion(s *site) {
	if c.real.promotedWith == nil {
		c.real.promotedWith, c.real.checked = map[string]gtid.Set{}, map[int64]bool{}
	}
	c.real.promotedWith[s.name] = s.db.executed.set(c.w.uuids)
}

// checkReal checks the real operator's persisted status after a step.
func (c *checker) checkReal(r *realOperator) {
	g := r.stored()
	st := &g.Status
	if st.TopologyGeneration < c.real.generation {
		c.violate(InvariantGeneration, fmt.Sprintf("generation %d after %d", st.TopologyGeneration, c.real.generation))
	}
	c.real.generation = max(c.real.generation, st.TopologyGeneration)
	c.checkMarks(st)
	for _, h := range st.FailoverHistory {
		if h.To == c.real.provisionalSite && h.Generation >= c.real.provisionalGen {
			c.discarded = c.discarded.Union(c.real.provisional)
			c.real.provisionalSite = ""
		}
		if h.TransactionsLost == nil || h.Generation == 0 || c.real.checked[h.Generation] {
			continue
		}
		// A count with a site's share still to be read (the old
		// primary's, an abandoned target's) is a lower bound, and so is
		// one a later failover overtook: checked as such on every step,
		// exactly once it is final.
		pending := h.LossPending()
		if !pending {
			if c.real.checked == nil {
				c.real.checked = map[int64]bool{}
			}
			c.real.checked[h.Generation] = true
		}
		from, ok1 := c.w.siteByName(h.From)
		to, ok2 := c.w.siteByName(h.To)
		base, ok3 := c.real.promotedWith[h.To]
		if !ok1 || !ok2 || !ok3 || !from.db.up || !from.pod {
			continue // nothing to compare with: the truth is gone with the server
		}
		// What the old primary held that the new one lacked: its own
		// transactions, and those of an earlier primary it replicated
		// while the new one was down (both acknowledged, both gone from
		// the history). The new primary's own past base are its writes
		// since, which the old one may have replicated from it.
		held := from.db.executed.clone()
		held[to.idx] = 0
		truth := held.set(c.w.uuids).Subtract(base)
		abandoned, ok := c.abandonedLoss(h, to, base)
		if !ok {
			continue
		}
		truth = truth.Union(abandoned)
		if pending {
			if int64(truth.Count()) < *h.TransactionsLost {
				c.violate(InvariantLossReported, fmt.Sprintf("failover %s -> %s (generation %d) reports at least %d lost, truly %d (%s)",
					h.From, h.To, h.Generation, *h.TransactionsLost, truth.Count(), truth))
			}
			continue
		}
		if int64(truth.Count()) != *h.TransactionsLost {
			c.violate(InvariantLossReported, fmt.Sprintf("failover %s -> %s (generation %d) reports %d lost, truly %d (%s)",
				h.From, h.To, h.Generation, *h.TransactionsLost, truth.Count(), truth))
		}
	}
}

// abandonedLoss is what the targets failover h abandoned wrote that its
// new primary to did not hold when made writable (base): each one's own
// transactions, up to its fence. ok is false when one's truth is gone.
func (c *checker) abandonedLoss(h v1alpha1.FailoverRecord, to *site, base gtid.Set) (gtid.Set, bool) {
	var lost gtid.Set
	for _, name := range h.Abandoned {
		a, found := c.w.siteByName(name)
		if !found || !a.db.up || !a.pod {
			return lost, false
		}
		if a == to {
			continue
		}
		own := make(txs, len(a.db.executed))
		own[a.idx] = a.db.executed[a.idx]
		lost = lost.Union(own.set(c.w.uuids).Subtract(base))
	}
	return lost, true
}

// checkMarks checks every divergence mark as it appears in status: the
// marked site truly holds a transaction the history discarded, or one
// the active site lacks. A site marked without one never rejoins by
// itself, for nothing (InvariantTruthful; the real operator's marks
// come from Decide's history and health rules).
func (c *checker) checkMarks(st *v1alpha1.MysqlFailoverGroupStatus) {
	if c.real.marked == nil {
		c.real.marked = map[string]string{}
	}
	active, ok := c.w.siteByName(st.ActiveSite)
	for _, rec := range st.Sites {
		if rec.DivergentGtid == c.real.marked[rec.Name] {
			continue
		}
		c.real.marked[rec.Name] = rec.DivergentGtid
		s, found := c.w.siteByName(rec.Name)
		if rec.DivergentGtid == "" || !found || !ok || s == active {
			continue
		}
		got := s.db.executed.set(c.w.uuids)
		errant := got.Subtract(active.db.executed.set(c.w.uuids)).Union(got.Intersect(c.discarded))
		if errant.IsEmpty() {
			c.violate(InvariantTruthful, fmt.Sprintf("%s marked divergent (%s) holding nothing the history discarded nor %s lacks",
				rec.Name, rec.DivergentGtid, active.name))
		}
	}
}
