//go:build envtest

package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/plugin"
)

var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

var nsCounter atomic.Int32

// newGroup creates a namespace and the group orders with sites iad and pdx,
// sent as unstructured JSON so that the CRD's defaults apply.
func newGroup(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("plugin-%d-%d", os.Getpid()%1000, nsCounter.Add(1))
	if err := cp.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": "orders", "namespace": ns},
		"spec": map[string]any{"sites": []any{
			map[string]any{"name": "iad", "zone": "iad"}, map[string]any{"name": "pdx", "zone": "pdx"}}}}}
	if err := cp.Client.Create(t.Context(), u); err != nil {
		t.Fatalf("create group: %v", err)
	}
	return ns
}

func get(t *testing.T, ns string) *v1alpha1.MysqlFailoverGroup {
	t.Helper()
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "orders"}, g); err != nil {
		t.Fatal(err)
	}
	return g
}

// setStatus writes status as the operator would.
func setStatus(t *testing.T, ns string, mod func(*v1alpha1.MysqlFailoverGroupStatus)) {
	t.Helper()
	g := get(t, ns)
	mod(&g.Status)
	if err := cp.Client.Status().Update(context.Background(), g); err != nil {
		t.Fatalf("status: %v", err)
	}
}

func TestStatusPrintsEveryPart(t *testing.T) {
	ns := newGroup(t)
	now := metav1.NewTime(time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC))
	lost, lag := int64(0), int64(3)
	setStatus(t, ns, func(st *v1alpha1.MysqlFailoverGroupStatus) {
		st.ActiveSite, st.TopologyGeneration, st.ObservedGeneration = "pdx", 4, 1
		st.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonHealthy, Message: "all good", LastTransitionTime: now}}
		st.Sites = []v1alpha1.SiteStatus{
			{Name: "iad", State: v1alpha1.StateReadOnly, Fenced: true, Replicating: true, SecondsBehindSource: &lag,
				GtidExecuted: "0-1-100"},
			{Name: "pdx", State: v1alpha1.StateWritable, GtidExecuted: "0-1-100"}}
		st.LastFailover = &v1alpha1.FailoverRecord{Time: now, From: "iad", To: "pdx", Kind: v1alpha1.KindPlanned,
			TransactionsLost: &lost}
		st.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseSucceeded, Request: "pdx",
			Target: "pdx", SourcePrimary: "iad", StartTime: &now, CompletionTime: &now, TransactionsLost: &lost,
			Message: "pdx is the primary"}
	})
	if err := plugin.Fence(t.Context(), cp.Client, ns, "orders", "iad", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := plugin.Status(t.Context(), cp.Client, ns, "orders", &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	for _, want := range []string{`Active site:\s+pdx\n`, `Fenced by an administrator:\s+iad\n`, `Topology generation:\s+4\n`,
		`Ready\s+True\s+Healthy\s+2026-11-21T06:00:00Z\s+all good`,
		`iad\s+primary-candidate\s+no\s+read-only\s+yes\s+yes\s+yes\s+3s\s+0-1-100`,
		`pdx\s+primary-candidate\s+yes\s+writable\s+no\s+no\s+no\s+-\s+0-1-100`,
		`Last failover:\s+planned iad -> pdx at 2026-11-21T06:00:00Z, transactions lost: 0`,
		`Planned failover:\s+Succeeded\n\s+request:\s+pdx\n\s+target:\s+pdx\n\s+source:\s+iad`,
		`message:\s+pdx is the primary`} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("status output lacks %s", want)
		}
	}
	if err := plugin.Status(t.Context(), cp.Client, ns, "nope", &out); !errors.Is(err, plugin.ErrUnknownGroup) {
		t.Errorf("status of an unknown group: %v, want ErrUnknownGroup", err)
	}
}

func TestSwitchoverSetsTheAnnotation(t *testing.T) {
	ns := newGroup(t)
	ctx := t.Context()
	if _, err := plugin.Switchover(ctx, cp.Client, ns, "orders", "sfo", 0); !errors.Is(err, plugin.ErrUnknownSite) ||
		!strings.Contains(err.Error(), "iad, pdx") {
		t.Errorf("unknown site: %v", err)
	}
	if _, err := plugin.Switchover(ctx, cp.Client, ns, "nope", "pdx", 0); !errors.Is(err, plugin.ErrUnknownGroup) {
		t.Errorf("unknown group: %v", err)
	}
	r, err := plugin.Switchover(ctx, cp.Client, ns, "orders", "pdx", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v := get(t, ns).Annotations[v1alpha1.PlannedFailoverAnnotation]; v != "pdx:maxLagWait=30s" || r.Value != v {
		t.Fatalf("annotation %q, request %q; want pdx:maxLagWait=30s", v, r.Value)
	}
	if _, err := plugin.Switchover(ctx, cp.Client, ns, "orders", "pdx", 0); !errors.Is(err, plugin.ErrRequestPending) {
		t.Errorf("second request: %v, want ErrRequestPending", err)
	}
}

// operator plays the operator's part of a planned failover: Pending, then
// the annotation removed and the terminal phase written.
func operator(t *testing.T, ns, value string, end v1alpha1.PlannedFailoverPhase, reason string) {
	t.Helper()
	start := metav1.NewTime(time.Now().Truncate(time.Second))
	setStatus(t, ns, func(st *v1alpha1.MysqlFailoverGroupStatus) {
		st.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhasePending, Request: value, StartTime: &start}
	})
	time.Sleep(300 * time.Millisecond)
	g := get(t, ns)
	delete(g.Annotations, v1alpha1.PlannedFailoverAnnotation)
	if err := cp.Client.Update(context.Background(), g); err != nil {
		t.Error(err)
		return
	}
	setStatus(t, ns, func(st *v1alpha1.MysqlFailoverGroupStatus) {
		st.PlannedFailover.Phase, st.PlannedFailover.Reason = end, reason
		if end == v1alpha1.PhaseFailed {
			st.PlannedFailover.Message = "the target did not catch up"
		}
	})
}

func TestWaitPlannedFollowsToTheEnd(t *testing.T) {
	ns := newGroup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		end    v1alpha1.PlannedFailoverPhase
		reason string
	}{{v1alpha1.PhaseFailed, v1alpha1.ReasonLagTimeout}, {v1alpha1.PhaseSucceeded, ""}} {
		r, err := plugin.Switchover(ctx, cp.Client, ns, "orders", "pdx", 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); time.Sleep(time.Second); operator(t, ns, r.Value, tc.end, tc.reason) }()
		var out bytes.Buffer
		b, err := plugin.WaitPlanned(ctx, cp.Client, r, 100*time.Millisecond, &out)
		<-done
		t.Logf("\n%s", out.String())
		if b == nil || b.Phase != tc.end {
			t.Fatalf("ended with %+v, want %s", b, tc.end)
		}
		failed := tc.end == v1alpha1.PhaseFailed
		if errors.Is(err, plugin.ErrPlannedFailed) != failed || (failed && !strings.Contains(err.Error(), tc.reason)) {
			t.Fatalf("%s: error %v", tc.end, err)
		}
		if !strings.Contains(out.String(), "Pending") || !strings.Contains(out.String(), string(tc.end)) {
			t.Errorf("progress output %q lacks the phases", out.String())
		}
		time.Sleep(time.Second) // the next request starts in a later second
	}
}

func TestFenceAndUnfenceEditTheAnnotation(t *testing.T) {
	ns := newGroup(t)
	ctx := t.Context()
	var out bytes.Buffer
	annotation := func() (string, bool) {
		v, ok := get(t, ns).Annotations[v1alpha1.FencedSitesAnnotation]
		return v, ok
	}
	steps := []struct {
		fence bool
		site  string
		want  string
	}{{true, "pdx", "pdx"}, {true, "pdx", "pdx"}, {true, "iad", "pdx,iad"}, {false, "pdx", "iad"}, {false, "pdx", "iad"},
		{false, "iad", ""}}
	for _, s := range steps {
		op := plugin.Unfence
		if s.fence {
			op = plugin.Fence
		}
		if err := op(ctx, cp.Client, ns, "orders", s.site, &out); err != nil {
			t.Fatal(err)
		}
		if v, ok := annotation(); v != s.want || ok != (s.want != "") {
			t.Fatalf("after fence=%v %s: annotation %q (present %v), want %q", s.fence, s.site, v, ok, s.want)
		}
	}
	t.Logf("\n%s", out.String())
	if err := plugin.Fence(ctx, cp.Client, ns, "orders", "sfo", &out); !errors.Is(err, plugin.ErrUnknownSite) {
		t.Errorf("fence sfo: %v, want ErrUnknownSite", err)
	}
	if err := plugin.Unfence(ctx, cp.Client, ns, "nope", "pdx", &out); !errors.Is(err, plugin.ErrUnknownGroup) {
		t.Errorf("unfence on an unknown group: %v, want ErrUnknownGroup", err)
	}
}
