package grouploop

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

var t0 = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

func testGroup(name, active string, gen int64) *v1alpha1.MysqlFailoverGroup {
	return &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec:   v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "a"}, {Name: "b"}}},
		Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: active, TopologyGeneration: gen}}
}

// testSigner signs the test API's views.
var testSigner = func() *protocol.Signer {
	s, err := protocol.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	return s
}()

func elected() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// newTestAPI is an elected /active-site API over a Registry whose clock
// reads the returned time, publishing carts (b active, generation 7).
func newTestAPI(t *testing.T) (*authority.API, *authority.Registry, *time.Time) {
	t.Helper()
	now := t0
	reg := authority.NewRegistry(func() time.Time { return now })
	reg.SetSigner(testSigner)
	reg.Publish(testGroup("carts", "b", 7))
	return &authority.API{Registry: reg, Elected: elected()}, reg, &now
}

// reportUnpublished has site's sidecar report generation gen through
// /active-site while the group has no view: the Registry notes the report
// and serves nothing.
func reportUnpublished(t *testing.T, reg *authority.Registry, key types.NamespacedName, sites []string, site string, gen int64) {
	t.Helper()
	reg.Know(key, sites)
	q := url.Values{v1alpha1.QueryNamespace: {key.Namespace}, v1alpha1.QueryGroup: {key.Name},
		v1alpha1.QuerySite: {site}, v1alpha1.QueryGeneration: {strconv.FormatInt(gen, 10)}}
	rec := httptest.NewRecorder()
	api := &authority.API{Registry: reg, Elected: elected()}
	api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+"?"+q.Encode(), nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("report of %s while unpublished: %d %s, want 503", site, rec.Code, rec.Body)
	}
	if got := reg.MaxReported(key, []string{site}); got < gen {
		t.Fatalf("report of %s at %d not noted: %d", site, gen, got)
	}
}
