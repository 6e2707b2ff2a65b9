package grouploop

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// get asks /active-site with query q and returns the status and the view.
func get(t *testing.T, api *authority.API, q string) (int, v1alpha1.ActiveSiteView) {
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
	l := &Loop{env: &Env{Registry: reg}, deb: map[string]*topology.Debouncer{"a": deb}}
	if _, _, err := deb.Observe(*now, topology.ProbeFailed); err != nil {
		t.Fatal(err)
	}
	g := testGroup("carts", "b", 7)
	l.noteFailures(g)
	key := types.NamespacedName{Namespace: "shop", Name: "carts"}
	confirm := func() (bool, string) {
		ev := topology.Evidence{Site: "a", Active: "b", Operator: reg.OperatorID(), Now: *now,
			FailingSince: l.failingSince("a"), FailingSeq: l.evidenceSeq(g, "a"), LastContact: *now,
			LeaseTimeout: time.Hour, PeerCheckInterval: time.Second, Report: reg.Sidecar(key, "a").Report()}
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
