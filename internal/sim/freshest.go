package sim

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// InvariantFreshest: a site made writable holds every transaction that an
// eligible site held (the freshest eligible site is the one promoted, and
// a re-asserted primary has lost nothing another site still has).
const InvariantFreshest = "freshest-promoted"

// pastKept is how many steps of each site's executed set the checker keeps.
const pastKept = 8

// history is what the freshness check remembers of a site.
type history struct {
	// past[step%pastKept] is the site's executed set at the end of step.
	past [pastKept]txs
	// observableSince is the first step of the site's current run of
	// steps in which the operator could have read it; -1 while it can't.
	observableSince int
}

// polling reports whether an operator process runs its poll loop at this
// step: one that believes it leads and is neither down nor paused. While
// none does, no site is probed, so none can become healthy to it: a
// paused process resumes with its debouncers as it left them, and a site
// that came back meanwhile needs the recovery threshold's probes again.
func (r *realOperator) polling() bool {
	for _, p := range r.procs {
		if p.leads && p.awake() {
			return true
		}
	}
	return false
}

// observable reports whether the operator can read s at this step: its
// mysqld up and running, the link both ways, its answers not lost.
func (w *World) observable(s *site) bool {
	return s.pod && s.db.up && !s.mysqldPaused(w.step) && !s.lossy(w.step) &&
		w.net.call(w.operatorNode(), s.idx, w.step)
}

// noteHistory records every site's state at the end of a step.
func (c *checker) noteHistory() {
	if c.hist == nil {
		c.hist = make([]history, len(c.w.sites))
		for i := range c.hist {
			c.hist[i].observableSince = -1
		}
	}
	r, _ := c.w.op.(*realOperator)
	polling := r != nil && r.polling()
	for i, s := range c.w.sites {
		h := &c.hist[i]
		slot := c.w.step % pastKept
		h.past[slot] = append(h.past[slot][:0], s.db.executed...) // reuse the slot's array: no allocation per step
		switch {
		case !polling || !c.w.observable(s):
			h.observableSince = -1
		case h.observableSince < 0:
			h.observableSince = c.w.step
		}
	}
}

// checkFreshest checks s as it becomes writable against every other site
// the operator must have counted as eligible: a primary candidate it could
// read for long enough to call healthy (the recovery threshold in polls,
// plus a poll, all while a process of it was polling), read-only, not fenced by an administrator nor known to
// have diverged. Each such site's executed set is taken as it was a poll
// ago (the operator's snapshot may be that old), without the site's own
// server's transactions and those the history already discarded.
func (c *checker) checkFreshest(s *site) {
	if c.hist == nil {
		return
	}
	poll := steps(c.w.cfg.PollInterval)
	settle := (c.w.cfg.RecoveryThreshold + 2) * poll
	if poll+1 >= pastKept || c.w.step < pastKept {
		return
	}
	st := c.w.op.persisted()
	got := s.db.executed.set(c.w.uuids)
	for i, o := range c.w.sites {
		h := c.hist[i]
		rec := st.Site(o.name)
		if o == s || o.role != v1alpha1.RolePrimaryCandidate || h.observableSince < 0 ||
			c.w.step-h.observableSince < settle || !o.db.readOnly || rec.AdminFenced || !rec.Divergent.IsEmpty() {
			continue
		}
		then := h.past[(c.w.step-poll-1)%pastKept].clone()
		then[o.idx] = 0
		missing := then.set(c.w.uuids).Subtract(c.discarded).Subtract(got)
		if !missing.IsEmpty() {
			c.violate(InvariantFreshest, fmt.Sprintf("%s made writable lacking %d transactions eligible %s held: %s",
				s.name, missing.Count(), o.name, missing))
		}
	}
}
