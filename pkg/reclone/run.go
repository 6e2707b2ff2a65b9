package reclone

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// handle answers a checked request: it reports the phase's progress, and
// starts its work when none runs and it is not done. The caller holds no
// lock.
func (e *Executor) handle(ctx context.Context, q Request) (Answer, *refusal) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, err := e.load()
	if err != nil {
		return Answer{}, refuse(http.StatusInternalServerError, RefuseStateFile, "%v", err)
	}
	if q.Phase == v1alpha1.RecoveryCloning && !slices.Contains(e.Donors, q.Donor) {
		return Answer{}, refuse(http.StatusBadRequest, RefuseUnknownDonor, "%q is not a site of this group", q.Donor)
	}
	if st.ID != q.ID {
		if r := e.mayBegin(q, st); r != nil {
			return Answer{}, r
		}
		if st, err = e.begin(q, st); err != nil {
			return Answer{}, refuse(http.StatusInternalServerError, RefuseStateFile, "%v", err)
		}
	}
	a := Answer{Phase: q.Phase, PreservedAt: st.PreservedAt, Position: st.Position, Message: st.LastError}
	if st.Failed != "" {
		a.Failed = st.Failed
		return a, nil
	}
	if done, r := e.phaseDone(ctx, q, st); r != nil || done {
		a.Done = done
		return a, r
	}
	if e.running == "" {
		e.start(q, st)
	}
	a.Running = true
	return a, nil
}

// mayBegin refuses q, which names a reclone other than the one on record,
// unless it begins a new one (docs/recovery.md, "Which reclone a site
// carries out"): no work runs, it is the Requested of an ID this site
// never carried out, accepted no earlier than the one on record. Any
// other phase names a reclone this site did not record, or one it gave
// up: a late, replayed or deposed operator's request.
func (e *Executor) mayBegin(q Request, st state) *refusal {
	switch {
	case e.running != "":
		return refuse(http.StatusConflict, RefuseBusy, "reclone %q is running its %s", st.ID, e.running)
	case st.seen(q.ID):
		return refuse(http.StatusConflict, RefuseOutOfOrder, "reclone %q ended or was superseded on this site", q.ID)
	case q.Phase != v1alpha1.RecoveryRequested:
		return refuse(http.StatusConflict, RefuseOtherReclone,
			"%s of reclone %q, which this site never recorded (it carries out %q): a reclone begins with %s",
			q.Phase, q.ID, st.ID, v1alpha1.RecoveryRequested)
	case st.ID != "" && q.Accepted.Before(st.Accepted):
		return refuse(http.StatusConflict, RefuseOutOfOrder, "reclone %q was accepted at %s, before %q (%s)",
			q.ID, q.Accepted.UTC().Format(time.RFC3339), st.ID, st.Accepted.UTC().Format(time.RFC3339))
	}
	return nil
}

// begin records a new reclone after st's, which joins the history. An
// earlier reclone's preserved data stays where it is; only the receiver's
// work folder is cleared.
func (e *Executor) begin(q Request, was state) (state, error) {
	if err := os.RemoveAll(e.receiveDir()); err != nil {
		return state{}, fmt.Errorf("reclone: clear the receiver's folder: %w", err)
	}
	st := state{ID: q.ID, Accepted: q.Accepted, DivergentGtid: q.DivergentGtid, Earlier: was.Earlier}
	if was.ID != "" {
		st.Earlier = append(st.Earlier, earlier{ID: was.ID, PreservedAt: was.PreservedAt})
	}
	if n := len(st.Earlier); n > maxEarlier {
		st.Earlier = st.Earlier[n-maxEarlier:]
	}
	if err := e.save(st); err != nil {
		return state{}, err
	}
	e.log().Info("reclone begins on this site", "id", q.ID)
	return st, nil
}

// phaseDone says whether q's phase is done; a refusal when its work may
// not start (the checks that need mysqld's state).
func (e *Executor) phaseDone(ctx context.Context, q Request, st state) (bool, *refusal) {
	switch q.Phase {
	case v1alpha1.RecoveryRequested:
		return true, nil
	case v1alpha1.RecoveryPreservingData:
		if !st.Preserved && e.running == "" {
			return false, e.layoutFits()
		}
		return st.Preserved, nil
	case v1alpha1.RecoveryCloning:
		if st.Seeded {
			return true, nil
		}
		if !st.Preserved {
			return false, refuse(http.StatusConflict, RefuseOtherReclone, "Cloning of %q before its PreservingData finished", q.ID)
		}
		if e.running == "" && !st.Moving {
			if r := e.layoutFits(); r != nil {
				return false, r
			}
			return false, e.mustBeFenced(ctx)
		}
		return false, nil
	case v1alpha1.RecoveryCatchingUp:
		if st.Position == "" {
			return false, refuse(http.StatusConflict, RefuseMalformed, "CatchingUp before the clone was installed")
		}
		return st.Seeded, nil
	}
	return false, refuse(http.StatusBadRequest, RefuseMalformed, "phase %q", q.Phase)
}

// layoutFits refuses a preservation root the datadir cannot be moved to.
func (e *Executor) layoutFits() *refusal {
	if err := e.probeLayout(); err != nil {
		return refuse(http.StatusInternalServerError, RefuseLayout, "%v", err)
	}
	return nil
}

// mustBeFenced refuses a mysqld that is writable or cannot be read.
func (e *Executor) mustBeFenced(ctx context.Context) *refusal {
	s, err := e.DB.Status(ctx)
	switch {
	case err != nil:
		return refuse(http.StatusServiceUnavailable, RefuseUnreadable, "read mysqld: %v", err)
	case !s.Fenced():
		return refuse(http.StatusConflict, RefuseWritable, "%v: its data is never replaced while it takes writes", ErrWritable)
	}
	return nil
}

// start runs q's phase in the background; e.mu is held.
func (e *Executor) start(q Request, st state) {
	e.running, e.done = q.Phase, make(chan struct{})
	done := e.done
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), orDefault(e.PhaseTimeout, defaultPhaseTimeout))
		defer cancel()
		err := e.work(ctx, q, st)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.running = ""
		e.settle(q, err)
	}()
}

// settle records how an attempt ended: a failure counts towards
// MaxAttempts; the last one fails the reclone on this site.
func (e *Executor) settle(q Request, werr error) {
	st, err := e.load()
	if err != nil || st.ID != q.ID {
		e.log().Error("reclone state after the work", "error", err, "id", q.ID)
		return
	}
	if werr == nil {
		st.Attempts, st.LastError = 0, ""
	} else {
		st.Attempts++
		st.LastError = werr.Error()
		if st.Attempts >= e.maxAttempts() {
			st.Failed = fmt.Sprintf("%s failed %d times: %v", q.Phase, st.Attempts, werr)
		}
		e.log().Error("reclone phase attempt failed", "phase", q.Phase, "attempt", st.Attempts, "error", werr)
	}
	if err := e.save(st); err != nil {
		e.log().Error("reclone state", "error", err)
	}
}

// work runs the phase's steps still to do.
func (e *Executor) work(ctx context.Context, q Request, st state) error {
	if err := e.preserve(ctx, &st); err != nil || q.Phase == v1alpha1.RecoveryPreservingData {
		return err
	}
	if q.Phase == v1alpha1.RecoveryCatchingUp {
		return e.seed(ctx, &st)
	}
	return e.clone(ctx, q, &st)
}
