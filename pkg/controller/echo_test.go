package controller

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
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

// TestStaleEchoAcrossClockStep (issue 13, path 7): the operator serves a
// sidecar a view, its wall clock then steps back (NTP, a resumed VM), and
// only then does it see the site fail. The sidecar's late report about a
// mysqld read made after that view, before the failure, must not confirm
// the fence, though the view's observedAt is later than the failure's
// first probe by the stepped clock. A report about a read after a view
// served once the failure was seen does.
func TestStaleEchoAcrossClockStep(t *testing.T) {
	api, reg, now := newTestAPI(t)
	*now = t0.Add(10 * time.Second)
	code, before := get(t, api, "namespace=shop&group=carts&site=a&generation=7&mysqld=up&fenced=false")
	if code != http.StatusOK || before.Seq < 1 {
		t.Fatalf("first view: %d %+v", code, before)
	}
	*now = t0.Add(5 * time.Second) // the clock steps back 5 s
	deb, err := topology.NewDebouncer(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := &groupLoop{op: &Operator{registry: reg}, deb: map[string]*topology.Debouncer{"a": deb}}
	if _, _, err := deb.Observe(*now, topology.ProbeFailed); err != nil {
		t.Fatal(err)
	}
	g := testGroup("carts", "b", 7)
	l.noteFailures(g)
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	confirm := func() (bool, string) {
		ev := topology.Evidence{Site: "a", Active: "b", Operator: reg.OperatorID(), Now: *now,
			FailingSince: l.failingSince("a"), FailingSeq: l.evidenceSeq(g, "a"), LastContact: *now,
			LeaseTimeout: time.Hour, PeerCheckInterval: time.Second, Report: reg.sidecar(key, "a").report}
		return topology.ConfirmFence(ev)
	}
	echo := func(v v1alpha1.ActiveSiteView) string {
		return "namespace=shop&group=carts&site=a&generation=7&mysqld=up&fenced=true&viewOperator=" + v.Operator +
			"&viewSeq=" + strconv.FormatInt(v.Seq, 10) + "&viewObservedAt=" + v.ObservedAt.Format(time.RFC3339Nano)
	}
	*now = now.Add(time.Second)
	code, after := get(t, api, echo(before))
	if code != http.StatusOK {
		t.Fatalf("late report: %d", code)
	}
	if !before.ObservedAt.After(l.failingSince("a")) {
		t.Fatalf("the test needs the stale view stamped after the failure by the clock: %s, %s",
			before.ObservedAt, l.failingSince("a"))
	}
	if ok, by := confirm(); ok {
		t.Fatalf("a report about a read before the failure confirmed the fence (%s)", by)
	}
	*now = now.Add(time.Second)
	if code, _ := get(t, api, echo(after)); code != http.StatusOK {
		t.Fatalf("fresh report: %d", code)
	}
	if ok, by := confirm(); !ok || by != topology.ConfirmedBySidecarReport {
		t.Fatalf("a report about a read after the failure: %v %q", ok, by)
	}
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
			sv := reg.sidecar(types.NamespacedName{Namespace: "shop", Name: "carts"}, "a")
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
