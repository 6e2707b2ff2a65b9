package sidecar

import (
	"bytes"
	"crypto/ed25519"
	"os"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// Test keys, shared by the internal and external tests of this package:
// TestSigner plays the operator; TestKeys is the ring the test sidecars
// accept; OtherSigner is a key no test sidecar accepts.
var (
	TestSigner  = mustSigner(1)
	OtherSigner = mustSigner(2)
	TestKeys    = mustRing(TestSigner.Public())
)

func mustSigner(seed byte) *protocol.Signer {
	s, err := protocol.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	return s
}

func mustRing(pubs ...ed25519.PublicKey) *protocol.KeyRing {
	r, err := protocol.NewKeyRing(pubs...)
	if err != nil {
		panic(err)
	}
	return r
}

// Sign is v signed by the test operator, as operator "test-op".
func Sign(v v1alpha1.ActiveSiteView) v1alpha1.ActiveSiteView {
	if v.Operator == "" {
		v.Operator = "test-op"
	}
	return TestSigner.Sign(v)
}

// FreshHandover is h as this process would save it now (its pid, the
// boot-time clock now), for tests of the handover across a re-exec.
func FreshHandover(h Handover) Handover {
	h.PID, h.SavedAt = os.Getpid(), bootClock()
	return h
}

// PrepareExec is what an upgrade does right before execve: take the fence
// lock (refused while the write hold is held) and save the handover. The
// lock is released again: the test's "exec" is halting this Runner.
func (r *Runner) PrepareExec() (Handover, error) {
	if err := r.lockForExec(); err != nil {
		return Handover{}, err
	}
	defer r.fenceMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.loop.handover(r.cfg.Clock.Now())
	h.LastSeen = r.st.db
	return h, nil
}
