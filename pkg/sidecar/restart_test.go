package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestRestartedSidecarRelaysNothingBeforeTheOperator is issue 13's path 1 at
// the runner: fra's sidecar restarted in place, reaches iad (the old
// primary) but not the operator. It learns iad's old view from iad, and
// must not serve it back, or iad's lease renews forever.
func TestRestartedSidecarRelaysNothingBeforeTheOperator(t *testing.T) {
	old := sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad", Generation: 4,
		ObservedAt: time.Now()})
	iad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(old)
	}))
	defer iad.Close()
	opSrv := httptest.NewServer(http.NotFoundHandler())
	opSrv.Close() // the operator is unreachable from fra
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "fra",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: opSrv.URL,
		Peers: []sidecar.Peer{{Name: "iad", URL: iad.URL}}, Logger: quietLogger()}, &fakeDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.Tick(context.Background())
	if code, body := get(t, r.Handler(), v1alpha1.PathPeerActiveSite); code != http.StatusServiceUnavailable {
		t.Fatalf("/peer/active-site before hearing the operator = %d %s, want 503", code, body)
	}
}
