//go:build envtest

package controller_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/controller"
)

// TestStatusExecutableHashes: status.operatorExecutableHash is the
// operator's own hash, and status.sites[].sidecarExecutableHash what each
// site's sidecar reported last, following a change of the report.
func TestStatusExecutableHashes(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	opHash := sha256Hex([]byte("operator build 1"))
	e.startOperatorWith(func(_ *controller.Deps, o *controller.Options) { o.OperatorExecutableHash = opHash })
	e.healthy()
	hashA, hashB, hashB2 := sha256Hex([]byte("sidecar a")), sha256Hex([]byte("sidecar b")), sha256Hex([]byte("sidecar b, swapped"))
	set := e.keepReportingHashes(map[string]string{"a": hashA, "b": hashB})
	e.eventually(10*time.Second, "the hashes in status", func() bool {
		g := e.get()
		return g.Status.OperatorExecutableHash == opHash && site(g, "a").SidecarExecutableHash == hashA &&
			site(g, "b").SidecarExecutableHash == hashB
	})
	set("b", hashB2) // b's sidecar re-executed another binary
	e.eventually(10*time.Second, "b's new hash in status", func() bool {
		g := e.get()
		return site(g, "b").SidecarExecutableHash == hashB2 && site(g, "a").SidecarExecutableHash == hashA
	})
}
