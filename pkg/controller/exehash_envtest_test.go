//go:build envtest

package controller_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/controller"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// shipSidecar writes a stand-in for the sidecar binary the operator ships
// and returns its path and SHA-256.
func shipSidecar(t *testing.T, content string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sidecar")
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, sha256Hex([]byte(content))
}

// keepReportingHashes sends each site's report with the executable hash
// hashes[site] says (read at each send: a test may change it through
// set), every 100 ms until the test ends.
func (e *env) keepReportingHashes(hashes map[string]string) (set func(site, hash string)) {
	e.t.Helper()
	ch := make(chan [2]string)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			g := &v1alpha1.MysqlFailoverGroup{}
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "orders"}, g); err == nil {
				for s, h := range hashes {
					e.askWithHash(ctx, s, g.Status.TopologyGeneration, h)
				}
			}
			select {
			case <-ctx.Done():
				return
			case kv := <-ch:
				hashes[kv[0]] = kv[1]
			case <-tick.C:
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return func(site, hash string) { ch <- [2]string{site, hash} }
}

func (e *env) askWithHash(ctx context.Context, site string, gen int64, hash string) {
	url := e.api.URL + v1alpha1.PathActiveSite + "?namespace=" + e.ns + "&group=orders&site=" + site +
		"&fenced=false&mysqld=up&generation=" + strconv.FormatInt(gen, 10) + "&" + v1alpha1.QueryExecutableHash + "=" + hash
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
}

// TestSidecarBinaryStaleCondition: without inPlaceSidecarUpdates, a
// sidecar that runs another binary than the operator ships is shown by
// the SidecarBinaryStale condition and a Warning Event naming the ways
// out; the update restarts nothing for it and does not begin (no phase),
// and the condition clears once the sidecar runs the shipped binary.
func TestSidecarBinaryStaleCondition(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	path, shipped := shipSidecar(t, "shipped sidecar")
	e.startOperatorWith(func(d *controller.Deps, _ *controller.Options) { d.SidecarBinary = path })
	e.healthy()
	old := sha256Hex([]byte("older sidecar"))
	set := e.keepReportingHashes(map[string]string{"a": shipped, "b": old})
	cond := func(status metav1.ConditionStatus, reason string) func() bool {
		return func() bool {
			c := metaCondition(e.get(), v1alpha1.ConditionSidecarBinaryStale)
			return c != nil && c.Status == status && c.Reason == reason
		}
	}
	e.eventually(10*time.Second, "SidecarBinaryStale true", cond(metav1.ConditionTrue, v1alpha1.ReasonSidecarBinaryDiffers))
	g := e.get()
	msg := metaCondition(g, v1alpha1.ConditionSidecarBinaryStale).Message
	for _, want := range []string{"sidecar of b runs another binary", "spec.updates.inPlaceSidecarUpdates", "spec.sidecar.image"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("condition message %q lacks %q", msg, want)
		}
	}
	if g.Status.Phase != v1alpha1.GroupPhaseNone {
		t.Fatalf("phase %q: a stale binary alone began an update", g.Status.Phase)
	}
	e.eventually(5*time.Second, "a SidecarBinaryStale Event", func() bool {
		evs := e.events(v1alpha1.EventSidecarBinaryStale)
		return len(evs) == 1 && evs[0].Type == "Warning" && evs[0].Note == msg
	})
	set("b", shipped)
	e.eventually(10*time.Second, "SidecarBinaryStale false", cond(metav1.ConditionFalse, v1alpha1.ReasonSidecarBinaryCurrent))
	if n := len(e.events(v1alpha1.EventSidecarBinaryStale)); n != 1 {
		t.Fatalf("%d SidecarBinaryStale Events, want one (once per change)", n)
	}
}
