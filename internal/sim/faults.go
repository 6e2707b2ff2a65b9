package sim

// restore brings back whatever a fault took away once its time is up.
func (w *World) restore() {
	w.landFences()
	defer w.fireLeaseFences()
	for _, s := range w.sites {
		if !s.pod && w.step >= s.podBackAt {
			s.pod, s.startedAt, s.sidecarStarts = true, w.now(), 0
			w.boot(s)
			w.startSidecar(s, carried{})
			w.logf("pod %s rescheduled: mysqld boots fenced, sidecar without a view", s.name)
		}
		if (s.frozenUntil > 0 && w.step == s.frozenUntil) || (s.sidecarFrozenUntil > 0 && w.step == s.sidecarFrozenUntil) {
			w.thaw(s)
		}
		if s.orphanUntil > 0 && w.step == s.orphanUntil && s.pod {
			// The kubelet reaches the API server again, finds its Pod
			// deleted and stops its containers; the replacement starts.
			s.pod, s.db.up, s.podBackAt, s.goneAt = false, false, w.step+1, w.now()
			w.logf("kubelet of %s back: the orphaned Pod's processes stopped", s.name)
		}
		if s.pod && !s.db.up && w.step >= s.dbBackAt {
			w.boot(s)
			w.logf("mysqld %s restarted fenced", s.name)
		}
		if rec := w.op.persisted().Site(s.name); rec.AdminFenced && w.step >= w.admin[s.idx] {
			w.op.adminFence(s.name, false)
			w.logf("administrator lifts the fence annotation on %s", s.name)
		}
	}
	if !w.op.running() && w.step >= w.opBackAt {
		if w.opSamePod {
			w.logf("operator containers restarted in their Pods: status and Lease identity kept, memory lost")
			w.op.restartInPods(w.now())
		} else {
			w.op.restart(w.now())
			w.logf("operator restarted: status kept, memory lost")
		}
	}
}

// fireFaults applies the faults scheduled for this step.
func (w *World) fireFaults() {
	w.noteFlushed()
	for w.next < len(w.sched) && w.sched[w.next].At <= w.step {
		f := w.sched[w.next]
		w.next++
		if f.At == w.step {
			w.fire(f)
		}
	}
}

// node resolves a Fault's site or peer number to a network node, -1 when invalid.
func (w *World) node(n int) int {
	switch {
	case n == Primary:
		s, _ := w.siteByName(w.op.persisted().ActiveSite)
		return s.idx
	case n == OperatorNode:
		return w.operatorNode()
	case n >= 0 && n < len(w.sites):
		return n
	}
	return -1
}

func (w *World) fire(f Fault) {
	target := w.node(f.Site)
	w.stats.Faults[f.Kind]++
	if f.Kind == FaultRestartOperator && f.By > 0 {
		w.logf("fault %s", f)
		w.op.crashAfterWrites(f.By, f.Dur)
		return
	}
	if f.Kind == FaultOperatorDown || f.Kind == FaultRestartOperator {
		w.logf("fault %s", f)
		w.op.stop()
		// A later fault of either kind decides how the operator comes back.
		w.opBackAt, w.opSamePod = w.step+f.Dur, f.Kind == FaultRestartOperator
		return
	}
	if f.Kind == FaultPauseOperator {
		w.logf("fault %s", f)
		if r, ok := w.op.(*realOperator); ok {
			r.pauseLeader(w.step + f.Dur)
		}
		return
	}
	if f.Kind == FaultOperatorClock {
		w.logf("fault %s", f)
		if r, ok := w.op.(*realOperator); ok {
			r.stepClock(f.By)
		}
		return
	}
	if f.Kind == FaultOneWay {
		w.logf("fault %s", f)
		w.fireOneWay(f, w.step+f.Dur)
		return
	}
	if target < 0 || target == w.operatorNode() {
		return
	}
	s := w.sites[target]
	w.logf("fault %s (%s)", f, s.name)
	until := w.step + f.Dur
	switch f.Kind {
	case FaultKillPod:
		s.pod, s.db.up, s.podBackAt, s.goneAt = false, false, until, w.now()
	case FaultCrashMySQL:
		if s.pod {
			s.db.up, s.dbBackAt = false, until
		}
	case FaultPartition:
		w.net.isolate(target, until)
	case FaultDropLink, FaultDelayLink:
		w.fireLink(f, target, until)
	case FaultSlowReplica:
		s.slowUntil = until
	case FaultPlanned:
		w.op.requestPlanned(s.name)
	case FaultAdminFence:
		w.op.adminFence(s.name, true)
		w.admin[target] = until
		if s.pod && s.db.up {
			s.db.readOnly = true
		}
	case FaultReclone:
		w.reclone(s)
	case FaultPowerLoss:
		w.powerLoss(s, until)
	case FaultPauseSite, FaultLossyReplies, FaultSkew, FaultLateReport, FaultLateView, FaultOrphanPod, FaultForgeReport,
		FaultPauseMySQL, FaultFailFence, FaultSlowFence, FaultPauseSidecar:
		w.fireReal(f, s, until)
	case FaultRestartSide:
		if s.pod {
			// The new process keeps only the state directory's files.
			var kept carried
			if s.sidecar != nil {
				kept = carried{floor: s.sidecar.generation(), active: s.sidecar.r.MayBeActive()}
			}
			s.sidecarStarts++
			w.startSidecar(s, kept)
		}
	}
}

func (w *World) fireLink(f Fault, a, until int) {
	b := w.node(f.Peer)
	if b < 0 || b == a {
		return
	}
	if f.Kind == FaultDropLink {
		w.net.cut(a, b, until)
		return
	}
	w.net.slow(a, b, f.Delay, until)
}

// reclone is the administrator's explicit answer to divergence: copy the
// active site's data onto a diverged site and let it replicate again.
func (w *World) reclone(s *site) {
	st := w.op.persisted()
	rec := st.Site(s.name)
	active, _ := w.siteByName(st.ActiveSite)
	if rec.Divergent.IsEmpty() || active == s || !active.writable() || !s.pod || !s.db.up || w.errantElsewhere(s, active) {
		return
	}
	s.db = mysqld{up: true, readOnly: true, executed: active.db.executed.clone(), received: active.db.executed.clone(),
		source: active.idx, replicating: true}
	w.noteRecloned(s)
	w.op.clearDivergence(s.name)
	w.check.prune()
	w.logf("administrator recloned %s from %s", s.name, active.name)
}

// errantElsewhere reports whether another site holds some of s's errant
// transactions. Recloning s would then let its server reuse those GTIDs for
// new transactions while old copies survive elsewhere (MySQL keeps the
// server uuid across a clone), so the sim's administrator does not.
func (w *World) errantElsewhere(s, active *site) bool {
	errant := s.db.executed.set(w.uuids).Subtract(active.db.executed.set(w.uuids))
	for _, o := range w.sites {
		if o != s {
			got := o.db.executed.set(w.uuids)
			if !got.Subtract(errant).Equal(got) {
				return true
			}
		}
	}
	return false
}
