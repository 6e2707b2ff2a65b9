package scenario

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func init() {
	register(Scenario{18, "key-rotation", "the view-signing key is rotated in three steps on a running group under load: no fence, no failover, no refused view", keyRotation})
}

// signatureReasons are the refused-view reasons a rotation done in the
// wrong order would show.
var signatureReasons = []string{sidecar.RejectUnsigned, sidecar.RejectUnknownKey, sidecar.RejectBadSignature, sidecar.RejectNoKeys}

func keyRotation(ctx context.Context, e *Env) Result {
	return play(ctx, e, "key-rotation", Plan{}, rotateViewKey)
}

// rotationStep is one step of the procedure in docs/security.md: a patch of
// the view-signing Secret and what every sidecar must show once it is done.
type rotationStep struct {
	name  string
	patch map[string][]byte // nil value: remove the key
	what  string
	done  func(sidecar.StatusReport) error
}

// rotationSteps are the three steps from the signing key old to next.
func rotationSteps(old ed25519.PublicKey) (steps []rotationStep, next string, err error) {
	priv, privPEM, pubPEM, err := newViewKey()
	if err != nil {
		return nil, "", err
	}
	oldPEM, err := protocol.EncodePublicKeys(old)
	if err != nil {
		return nil, "", err
	}
	oldID, newID := protocol.KeyID(old), protocol.KeyID(priv.Public().(ed25519.PublicKey))
	return []rotationStep{
		{name: "accept the new key", patch: map[string][]byte{routing.ViewAcceptedKey: pubPEM},
			what: "every sidecar accepts both keys", done: keysAre(oldID, newID)},
		{name: "sign with the new key", patch: map[string][]byte{routing.ViewSigningKey: privPEM, routing.ViewAcceptedKey: oldPEM},
			what: "every sidecar holds a view signed with the new key", done: allOf(keysAre(oldID, newID), viewSignedBy(newID))},
		{name: "drop the old key", patch: map[string][]byte{routing.ViewAcceptedKey: nil},
			what: "every sidecar accepts only the new key", done: allOf(keysAre(newID), viewSignedBy(newID))},
	}, newID, nil
}

func allOf(conds ...func(sidecar.StatusReport) error) func(sidecar.StatusReport) error {
	return func(st sidecar.StatusReport) error {
		for _, c := range conds {
			if err := c(st); err != nil {
				return err
			}
		}
		return nil
	}
}

// baseline is what one sidecar showed before the rotation.
type baseline struct {
	boot     string
	fence    *sidecar.FenceReport
	rejected map[string]float64
}

// rotateViewKey rotates the operator's view-signing key through the API, as
// docs/security.md says, while the group runs under load: accept the new
// public key, sign with the new key, drop the old one, each step waiting
// until every sidecar shows it. Nothing may notice: no sidecar fences,
// restarts or refuses a view, the group does not fail over, the primary
// refuses no probe and writes flow as in a steady run.
func rotateViewKey(ctx context.Context, g *Group, l *Load, r *Result) error {
	oldPriv, extra, err := g.e.signingKeys(ctx)
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		return fmt.Errorf("secret %s already holds %s: a rotation is under way", routing.ViewSigningSecret, routing.ViewAcceptedKey)
	}
	old := oldPriv.Public().(ed25519.PublicKey)
	steps, newID, err := rotationSteps(old)
	if err != nil {
		return err
	}
	if _, err := g.waitSidecars(ctx, "every sidecar on the current key", 30*time.Second,
		allOf(keysAre(protocol.KeyID(old)), viewSignedBy(protocol.KeyID(old)))); err != nil {
		return err
	}
	before, err := g.baselines(ctx)
	if err != nil {
		return err
	}
	w := g.watch(ctx)
	defer w.stop()
	start := l.Mark("rotation")
	for i, st := range steps {
		at := l.Mark(fmt.Sprintf("key-rotation-step-%d", i+1))
		if err := g.e.patchSigningSecret(ctx, st.patch); err != nil {
			return err
		}
		done, err := g.waitSidecars(ctx, st.what, 2*time.Minute, st.done)
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.name, err)
		}
		r.Figure(fmt.Sprintf("key-rotation-step-%d-seconds", i+1), done.Sub(at).Seconds())
		g.e.Logf("step %d (%s) done on every sidecar in %.1fs", i+1, st.name, done.Sub(at).Seconds())
	}
	// Past one more lease: a sidecar whose renewals stopped would fence now.
	if err := sleepCtx(ctx, g.T.LeaseTimeout+g.T.PeerCheckInterval); err != nil {
		return err
	}
	end := l.Mark("end")
	seen := w.stop()
	r.Notef("rotated from key %s to %s; status: %s", protocol.KeyID(old), newID, history(seen, start))
	g.judgeSidecars(ctx, r, before)
	noFailover(ctx, g, r)
	judgeSteady(g, seen, r, start)
	rep := r.finish(ctx, l, -1)
	n, p := refusedOn(&l.hist, g.Sites[0], start, end)
	if n > 0 {
		r.Failf("%s refused %d probes during the rotation, first %s", g.Sites[0], n, p.Err)
	}
	r.Figure("window-s", rep.MaxWindow.Seconds())
	if rep.MaxWindow > time.Second {
		r.Failf("writes unavailable for %s during the rotation", rep.MaxWindow)
	}
	return nil
}

// baselines reads what every sidecar shows before the rotation.
func (g *Group) baselines(ctx context.Context) (map[string]baseline, error) {
	sts, err := g.sidecarStatuses(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]baseline{}
	for _, s := range g.Sites {
		rej, err := g.rejectedViews(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%s sidecar metrics: %w", s, err)
		}
		out[s] = baseline{boot: sts[s].Boot, fence: sts[s].LastFence, rejected: rej}
	}
	return out, nil
}

// judgeSidecars compares every sidecar with its baseline: same process, no
// new self-fence, no view refused for its signature.
func (g *Group) judgeSidecars(ctx context.Context, r *Result, before map[string]baseline) {
	sts, err := g.sidecarStatuses(ctx)
	if err != nil {
		r.Failf("sidecar status after the rotation: %v", err)
	}
	for _, s := range g.Sites {
		b, st := before[s], sts[s]
		if err == nil && st.Boot != b.boot {
			r.Failf("%s's sidecar restarted during the rotation (boot %s, was %s)", s, st.Boot, b.boot)
		}
		if f := st.LastFence; f != nil && (b.fence == nil || !f.At.Equal(b.fence.At)) {
			r.Failf("%s's sidecar fenced its mysqld at %s: %s", s, f.At.Format("15:04:05.000"), f.Reason)
		}
		rej, rerr := g.rejectedViews(ctx, s)
		if rerr != nil {
			r.Failf("%s sidecar metrics after the rotation: %v", s, rerr)
			continue
		}
		for reason, v := range rej {
			d := v - b.rejected[reason]
			switch {
			case d <= 0:
			case slices.Contains(signatureReasons, reason):
				r.Failf("%s's sidecar refused %g views during the rotation (reason %s)", s, d, reason)
			default:
				r.Notef("%s's sidecar refused %g views during the rotation (reason %s)", s, d, reason)
			}
		}
	}
}

// judgeSteady checks every status the watcher saw since start: the first
// site active at generation 1 throughout.
func judgeSteady(g *Group, seen []sighting, r *Result, start time.Time) {
	for _, s := range seen {
		if s.Active != g.Sites[0] || s.Gen != 1 {
			r.Failf("status showed %s active at generation %d, %.1fs into the rotation", s.Active, s.Gen, s.At.Sub(start).Seconds())
			return
		}
	}
}
