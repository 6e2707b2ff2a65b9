package authority

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

var t0 = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

func testGroup(name, active string, gen int64) *v1alpha1.MysqlFailoverGroup {
	return &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec:   v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "a"}, {Name: "b"}}},
		Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: active, TopologyGeneration: gen}}
}

// testSigner signs the test API's views; testKeys verify them.
var testSigner, testKeys = func() (*protocol.Signer, *protocol.KeyRing) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	s, err := protocol.NewSigner(priv)
	if err != nil {
		panic(err)
	}
	k, err := protocol.NewKeyRing(s.Public())
	if err != nil {
		panic(err)
	}
	return s, k
}()

// elected is a closed channel: the replica leads.
func elected() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func newTestAPI(t *testing.T) (*API, *Registry, *time.Time) {
	t.Helper()
	now := t0
	reg := NewRegistry(func() time.Time { return now })
	reg.SetSigner(testSigner)
	reg.Publish(testGroup("carts", "b", 7))
	return &API{Registry: reg, Elected: elected()}, reg, &now
}

func TestActiveSiteAPI(t *testing.T) {
	cases := []struct {
		name   string
		query  string
		code   int
		active string
		gen    int64
	}{
		{"published group", "namespace=shop&group=carts", http.StatusOK, "b", 7},
		{"a group not yet published: 503, never the persisted status", "namespace=shop&group=orders", http.StatusServiceUnavailable, "", 0},
		{"sidecar report", "namespace=shop&group=carts&site=a&generation=6&fenced=true&mysqld=up", http.StatusOK, "b", 7},
		{"sidecar report of mysqld down", "namespace=shop&group=carts&site=a&generation=7&mysqld=down", http.StatusOK, "b", 7},
		{"sidecar report with boot id and echo", "namespace=shop&group=carts&site=a&generation=7&fenced=true&mysqld=up" +
			"&boot=b1&viewOperator=op1&viewObservedAt=2026-04-20T13:59:59.5Z", http.StatusOK, "b", 7},
		{"sidecar report with a sequence echo", "namespace=shop&group=carts&site=a&generation=7&fenced=true&mysqld=up" +
			"&boot=b1&viewOperator=op1&viewSeq=12&viewObservedAt=2026-04-20T13:59:59.5Z", http.StatusOK, "b", 7},
		{"echo without its seq or time", "namespace=shop&group=carts&site=a&viewOperator=op1", http.StatusBadRequest, "", 0},
		{"echo time without the operator", "namespace=shop&group=carts&site=a&viewObservedAt=2026-04-20T13:59:59Z", http.StatusBadRequest, "", 0},
		{"echo time not RFC 3339", "namespace=shop&group=carts&site=a&viewOperator=o&viewObservedAt=yesterday", http.StatusBadRequest, "", 0},
		{"a boot id without a site", "namespace=shop&group=carts&boot=b1", http.StatusBadRequest, "", 0},
		{"unknown group", "namespace=shop&group=nope", http.StatusServiceUnavailable, "", 0},
		{"missing namespace", "group=carts", http.StatusBadRequest, "", 0},
		{"missing group", "namespace=shop", http.StatusBadRequest, "", 0},
		{"unknown site", "namespace=shop&group=carts&site=z", http.StatusBadRequest, "", 0},
		{"generation not a number", "namespace=shop&group=carts&site=a&generation=x", http.StatusBadRequest, "", 0},
		{"negative generation", "namespace=shop&group=carts&site=a&generation=-1", http.StatusBadRequest, "", 0},
		{"fenced not a boolean", "namespace=shop&group=carts&site=a&fenced=maybe", http.StatusBadRequest, "", 0},
		{"mysqld neither up nor down", "namespace=shop&group=carts&site=a&mysqld=sideways", http.StatusBadRequest, "", 0},
		{"a report without its site", "namespace=shop&group=carts&fenced=true", http.StatusBadRequest, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, _, _ := newTestAPI(t)
			rec := httptest.NewRecorder()
			api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+"?"+c.query, nil))
			if rec.Code != c.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.code, rec.Body)
			}
			if c.code != http.StatusOK {
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] == "" {
					t.Fatalf("error body %q: %v", rec.Body, err)
				}
				return
			}
			var v v1alpha1.ActiveSiteView
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			if v.ActiveSite != c.active || v.Generation != c.gen || !v.ObservedAt.Equal(t0) || v.Source != v1alpha1.SourceOperator ||
				v.Operator != api.Registry.OperatorID() || v.Seq != 1 {
				t.Fatalf("view %+v", v)
			}
			if err := testKeys.Verify(v); err != nil {
				t.Fatalf("served view does not verify: %v", err)
			}
		})
	}
}

func TestActiveSiteRecordsReports(t *testing.T) {
	api, reg, now := newTestAPI(t)
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	get := func(q string) {
		rec := httptest.NewRecorder()
		api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+"?namespace=shop&group=carts&"+q, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
	get("site=a&generation=6&mysqld=down")
	// Served 7, it reported holding 6: it has not adopted 7 yet (it adopts
	// and writes its active record after this answer), so its generation is
	// 6. Before, the generation served counted as adopted.
	if gen, live := reg.Generation(key, "a", time.Hour); gen != 6 || !live {
		t.Fatalf("Generation = %d %v after serving 7 to a sidecar reporting 6, want 6", gen, live)
	}
	sv := reg.Sidecar(key, "a")
	if sv.report == nil || !sv.report.MysqldDown || sv.report.Generation != 6 || !sv.report.At.Equal(t0) {
		t.Fatalf("report %+v", sv.report)
	}
	if !sv.lastServed.Equal(t0) || sv.servedGen != 7 || !sv.held || sv.heldGen != 6 || !sv.heldSince.Equal(t0) {
		t.Fatalf("served %+v", sv.sidecarRecord)
	}
	*now = t0.Add(time.Second)
	get("site=a&generation=7&fenced=true&mysqld=up")
	sv = reg.Sidecar(key, "a")
	if !sv.report.Fenced || sv.report.MysqldDown || sv.heldGen != 7 || !sv.heldSince.Equal(t0.Add(time.Second)) ||
		!sv.lastServed.Equal(t0.Add(time.Second)) {
		t.Fatalf("second report %+v served %+v", sv.report, sv.sidecarRecord)
	}
	get("site=a&generation=7&fenced=true&mysqld=up&boot=b2&viewOperator=op1&viewObservedAt=2026-04-20T14:00:00.5Z")
	sv = reg.Sidecar(key, "a")
	if r := sv.report; r.Boot != "b2" || r.ViewOperator != "op1" || r.ViewSeq != 0 ||
		sv.heldBoot != "b2" || !sv.heldSince.Equal(t0.Add(time.Second)) {
		t.Fatalf("report with boot id and echo %+v, run from %s by %q", r, sv.heldSince, sv.heldBoot)
	}
	if gen, live := reg.Generation(key, "a", 1500*time.Millisecond); gen != 7 || !live {
		t.Fatalf("Generation = %d %v", gen, live)
	}
	*now = t0.Add(3 * time.Second)
	if _, live := reg.Generation(key, "a", 1500*time.Millisecond); live {
		t.Fatal("a sidecar silent for longer than leaseTimeout is not live")
	}
	if _, live := reg.Generation(key, "b", time.Hour); live {
		t.Fatal("a sidecar never heard from is not live")
	}
}

// TestStandbyServesNoView: a replica that is not the elected leader, or a
// leader without its signing key, answers 503 and records no report (it
// renews nothing), even for a group it once published.
func TestStandbyServesNoView(t *testing.T) {
	cases := []struct {
		name string
		mod  func(a *API, reg *Registry)
	}{
		{"a standby (not elected)", func(a *API, _ *Registry) { a.Elected = make(chan struct{}) }},
		{"no election channel", func(a *API, _ *Registry) { a.Elected = nil }},
		{"elected, but the signing key is not loaded", func(_ *API, reg *Registry) { reg.SetSigner(nil) }},
	}
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, reg, _ := newTestAPI(t)
			c.mod(api, reg)
			rec := httptest.NewRecorder()
			api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet,
				v1alpha1.PathActiveSite+"?namespace=shop&group=carts&site=a&generation=7&fenced=true&mysqld=up", nil))
			if rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503: %s", rec.Code, rec.Body)
			}
			if sv := reg.Sidecar(key, "a"); sv.known {
				t.Fatalf("a 503 recorded the report: %+v", sv.sidecarRecord)
			}
		})
	}
}
