package authority

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// echoAPI is newTestAPI with a ReportAuth (no CA, no reader: every plain
// report is accepted, and refusals are counted).
func echoAPI(t *testing.T) (*API, *Registry, *time.Time) {
	t.Helper()
	api, reg, now := newTestAPI(t)
	api.Auth = NewReportAuth(nil, nil, nil, nil, logr.Discard())
	return api, reg, now
}

// get asks /active-site with query q and returns the status and the view.
func get(t *testing.T, api *API, q string) (int, v1alpha1.ActiveSiteView) {
	t.Helper()
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, v1alpha1.PathActiveSite+"?"+q, nil))
	var v v1alpha1.ActiveSiteView
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
	}
	return rec.Code, v
}

// TestEchoRefused: an echo the operator cannot read, or of a view of its
// own it never served, is refused with 400, counted, and recorded nowhere.
func TestEchoRefused(t *testing.T) {
	const report = "namespace=shop&group=carts&site=a&generation=7&fenced=true&mysqld=up"
	cases := []struct {
		name   string
		query  func(op string) string
		reason string // "" when accepted
	}{
		{"an echo of a served view", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=1" }, ""},
		{"an echo of another process's view (not evidence, not checked)", func(string) string {
			return report + "&viewOperator=op0&viewSeq=99999"
		}, ""},
		{"an older sidecar's time echo", func(op string) string {
			return report + "&viewOperator=" + op + "&viewObservedAt=2026-04-20T13:59:59Z"
		}, ""},
		{"a seq and a time together", func(op string) string {
			return report + "&viewOperator=" + op + "&viewSeq=1&viewObservedAt=2026-04-20T13:59:59Z"
		}, ""},
		{"an echo of a view not served yet", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=2" }, RejectForgedEcho},
		{"an echo of the largest seq", func(op string) string {
			return report + "&viewOperator=" + op + "&viewSeq=9223372036854775807"
		}, RejectForgedEcho},
		{"a seq past int64", func(op string) string {
			return report + "&viewOperator=" + op + "&viewSeq=9223372036854775808"
		}, RejectMalformed},
		{"a negative seq", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=-1" }, RejectMalformed},
		{"a zero seq", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=0" }, RejectMalformed},
		{"a seq with a plus sign", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=%2B1" }, RejectMalformed},
		{"a seq of 20 digits", func(op string) string {
			return report + "&viewOperator=" + op + "&viewSeq=00000000000000000001"
		}, RejectMalformed},
		{"a seq not a number", func(op string) string { return report + "&viewOperator=" + op + "&viewSeq=1e3" }, RejectMalformed},
		{"a seq without the operator", func(string) string { return report + "&viewSeq=1" }, RejectMalformed},
		{"the operator without a seq or time", func(op string) string { return report + "&viewOperator=" + op }, RejectMalformed},
		{"a time echo too long", func(op string) string {
			return report + "&viewOperator=" + op + "&viewObservedAt=2026-04-20T13:59:59.123456789000000000000000000000000000000000000000000000000Z"
		}, RejectMalformed},
		{"a seq without a site", func(op string) string {
			return "namespace=shop&group=carts&viewOperator=" + op + "&viewSeq=1"
		}, RejectMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, reg, _ := echoAPI(t)
			if code, v := get(t, api, "namespace=shop&group=carts"); code != http.StatusOK || v.Seq != 1 {
				t.Fatalf("first view: %d seq %d", code, v.Seq)
			}
			code, _ := get(t, api, c.query(reg.OperatorID()))
			sv := reg.Sidecar(types.NamespacedName{Namespace: "shop", Name: "carts"}, "a")
			if c.reason == "" {
				// Served (a plain report is no evidence, so none is kept).
				if code != http.StatusOK || !sv.known {
					t.Fatalf("status %d, served %v: want accepted", code, sv.known)
				}
				return
			}
			if code != http.StatusBadRequest || sv.known {
				t.Fatalf("status %d, recorded %v: want 400 and nothing recorded", code, sv.known)
			}
			if n := testutil.ToFloat64(api.Auth.Rejected().WithLabelValues(c.reason)); n != 1 {
				t.Fatalf("%s refusals counted %v, want 1", c.reason, n)
			}
		})
	}
}

// fakeStatusClient is a fake API server holding objs, with the group's
// status subresource.
func fakeStatusClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.MysqlFailoverGroup{}).Build()
}

// Review of this session's refusals: anyone who reaches the API port can
// send malformed reports. For a request that proves no site they are
// counted, and raise no Event (a flood of them must not fill the group's
// Events); the group here is published, so a proven report would raise one.
func TestUnprovenMalformedReportRaisesNoEvent(t *testing.T) {
	api, reg, _ := newTestAPI(t)
	g := testGroup("carts", "a", 7)
	cl := fakeStatusClient(t, g)
	rec := events.NewFakeRecorder(8)
	api.Auth = NewReportAuth(nil, cl, rec, nil, logr.Discard())
	if code, _ := get(t, api, "namespace=shop&group=carts"); code != http.StatusOK {
		t.Fatalf("first view: %d", code)
	}
	for range 3 {
		if code, _ := get(t, api, "namespace=shop&group=carts&site=a&generation=7&viewOperator="+reg.OperatorID()+"&viewSeq=-1"); code != http.StatusBadRequest {
			t.Fatalf("malformed report answered %d", code)
		}
	}
	if n := testutil.ToFloat64(api.Auth.Rejected().WithLabelValues(RejectMalformed)); n != 3 {
		t.Fatalf("%v malformed refusals counted, want 3", n)
	}
	if len(rec.Events) != 0 {
		t.Fatalf("an unproven request raised an Event: %s", <-rec.Events)
	}
}
