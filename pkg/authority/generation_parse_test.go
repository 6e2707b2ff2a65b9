package authority

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestReportGenerationBounds: the generation a sidecar reports feeds the
// AuthorityRegressed check and peer adoption. A forged or buggy value must
// be refused (400, counted and logged), never recorded: max int64 would
// hold the group with no confirmation able to go above it.
func TestReportGenerationBounds(t *testing.T) {
	cases := []struct {
		name  string
		value string
		want  int64
		bad   bool
	}{
		{"absent", "", 0, false},
		{"zero", "0", 0, false},
		{"an ordinary generation", "7", 7, false},
		{"max int64", "9223372036854775807", 0, true},
		{"max int64 + 1 overflows the parse", "9223372036854775808", 0, true},
		{"negative", "-1", 0, true},
		{"min int64", "-9223372036854775808", 0, true},
		{"not a number", "seven", 0, true},
		{"a float", "7.0", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := v1alpha1.PathActiveSite + "?namespace=shop&group=carts&site=fra"
			if c.value != "" {
				q += "&generation=" + c.value
			}
			ar, err := parseActiveRequest(httptest.NewRequest(http.MethodGet, q, nil))
			if c.bad {
				if !errors.Is(err, ErrBadRequest) {
					t.Fatalf("err = %v, want ErrBadRequest", err)
				}
				return
			}
			if err != nil || ar.report == nil || ar.report.Generation != c.want {
				t.Fatalf("got %+v, %v; want generation %d", ar.report, err, c.want)
			}
		})
	}
}

// TestForgedGenerationRefusedAndCounted: an /active-site request carrying
// a generation no operator publishes is answered 400, counted as malformed,
// and recorded nowhere: the authority check never sees it and the sidecar
// is served no view (its lease is not renewed).
func TestForgedGenerationRefusedAndCounted(t *testing.T) {
	for _, gen := range []string{"9223372036854775807", "9223372036854775808",
		strconv.FormatInt(topology.MaxGeneration+1, 10), "-1"} {
		t.Run(gen, func(t *testing.T) {
			api, reg, _ := newTestAPI(t)
			api.Auth = NewReportAuth(nil, nil, nil, nil, logr.Discard())
			rec := httptest.NewRecorder()
			api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+
				"?namespace=shop&group=carts&site=a&fenced=false&mysqld=up&generation="+gen, nil))
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("code %d, want 400", rec.Code)
			}
			if n := testutil.ToFloat64(api.Auth.Rejected().WithLabelValues(RejectMalformed)); n != 1 {
				t.Fatalf("malformed refusals counted %v, want 1", n)
			}
			key := types.NamespacedName{Namespace: "shop", Name: "carts"}
			if got := reg.MaxReported(key, []string{"a", "b"}); got != 0 {
				t.Fatalf("a refused report reached the authority check: %d", got)
			}
		})
	}
}
