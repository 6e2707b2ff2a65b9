//go:build envtest

package controller_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// report sends site's sidecar report (holding generation gen) to the operator's API.
func (e *env) report(site string, gen int64) int {
	e.t.Helper()
	resp, err := http.Get(e.api.URL + v1alpha1.PathActiveSite + "?namespace=" + e.ns + "&group=orders&site=" + site +
		"&fenced=false&mysqld=up&generation=" + strconv.FormatInt(gen, 10))
	if err != nil {
		e.t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestAuthorityRegressedWaitsForAPerson: the group runs at generation 1 and
// a's sidecar reports it. Then status is emptied (as an etcd restore or a
// careless edit would): today the operator bootstraps generation 1 again at
// once. It must instead block with AuthorityRegressed and change nothing,
// even across an operator restart, until the confirm-authority annotation
// names a generation at least the reported one; then the generation goes
// above it and the writing site stays the only writer.
func TestAuthorityRegressedWaitsForAPerson(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.healthy()
	if code := e.report("a", 1); code != http.StatusOK {
		t.Fatalf("report: %d", code)
	}
	g := e.get()
	g.Status = v1alpha1.MysqlFailoverGroupStatus{}
	if err := cp.Client.Status().Update(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	regressed := func() bool {
		c := metaCondition(e.get(), v1alpha1.ConditionDegraded)
		return c != nil && c.Reason == v1alpha1.ReasonAuthorityRegressed
	}
	e.eventually(10*time.Second, "AuthorityRegressed", regressed)
	e.op.stop() // a restarted operator hears the sidecar again before it may bootstrap
	e.startOperator()
	for range 12 {
		_ = e.report("a", 1)
		time.Sleep(pollInterval)
		if g := e.get(); g.Status.TopologyGeneration != 0 || g.Status.ActiveSite != "" || !regressed() {
			t.Fatalf("the operator changed the authority without a person: %+v", g.Status)
		}
	}
	if !e.writable("a") || e.writable("b") {
		t.Fatalf("writers changed while blocked: a=%v b=%v", e.writable("a"), e.writable("b"))
	}
	// A confirmation below the reported generation counts for nothing.
	e.setAnnotation(v1alpha1.ConfirmAuthorityAnnotation, "0")
	time.Sleep(4 * pollInterval)
	if !regressed() {
		t.Fatal("a confirmation below the reported generation unblocked the group")
	}
	e.setAnnotation(v1alpha1.ConfirmAuthorityAnnotation, "1")
	// The confirmation sets generation 2; adopting a as the authority then
	// takes one more (one generation names one site).
	e.eventually(10*time.Second, "confirmed: generation 3, a active", func() bool {
		g := e.get()
		_, left := g.Annotations[v1alpha1.ConfirmAuthorityAnnotation]
		return g.Status.TopologyGeneration == 3 && g.Status.ActiveSite == "a" && !left
	})
	e.healthy()
	if !e.writable("a") || e.writable("b") {
		t.Fatalf("after confirmation: a=%v b=%v", e.writable("a"), e.writable("b"))
	}
}

// setAnnotation sets one annotation on the group.
func (e *env) setAnnotation(key, value string) {
	e.t.Helper()
	g := e.get()
	if g.Annotations == nil {
		g.Annotations = map[string]string{}
	}
	g.Annotations[key] = value
	if err := cp.Client.Update(e.t.Context(), g); err != nil {
		e.t.Fatal(err)
	}
}
