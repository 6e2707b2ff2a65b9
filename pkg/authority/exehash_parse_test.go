package authority

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestReportExecutableHash: a report's executableHash is recorded when it
// is 64 lowercase hex digits, and anything else refuses the report.
func TestReportExecutableHash(t *testing.T) {
	good := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		hash string
		code int
	}{
		{"a hash", good, http.StatusOK},
		{"too long", good + "00", http.StatusBadRequest},
		{"uppercase", strings.ToUpper(good), http.StatusBadRequest},
		{"not hex", strings.Repeat("zz", 32), http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, reg, _ := newTestAPI(t)
			rec := httptest.NewRecorder()
			api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+
				"?namespace=shop&group=carts&site=a&generation=6&"+v1alpha1.QueryExecutableHash+"="+c.hash, nil))
			if rec.Code != c.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.code, rec.Body)
			}
			rep := reg.Sidecar(types.NamespacedName{Namespace: "shop", Name: "carts"}, "a").Report()
			switch {
			case c.code == http.StatusOK && (rep == nil || rep.ExecutableHash != c.hash):
				t.Fatalf("report %+v: hash not recorded", rep)
			case c.code != http.StatusOK && rep != nil:
				t.Fatalf("a refused report was recorded: %+v", rep)
			}
		})
	}
}
