package plugin

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestDiverged: the diverged sites with their errant sets and counts, a
// reclone's phase and its preserved data, a rejoined site's preserved
// data, and nothing of the healthy sites.
func TestDiverged(t *testing.T) {
	site := func(name, div string, r *v1alpha1.SiteRecovery) v1alpha1.SiteStatus {
		return v1alpha1.SiteStatus{Name: name, DivergentGtid: div, Recovery: r}
	}
	cases := []struct {
		name  string
		sites []v1alpha1.SiteStatus
		want  []string
		not   []string
	}{
		{"none", []v1alpha1.SiteStatus{site("a", "", nil), site("b", "", nil)},
			[]string{"no diverged site"}, []string{"a:", "b:"}},
		{"waiting for a person", []v1alpha1.SiteStatus{site("a", "", nil), site("c", "0-3:1-3", nil)},
			[]string{"c: diverged: 0-3:1-3 (3 transactions", "no reclone yet"}, []string{"a:"}},
		{"reclone in Cloning", []v1alpha1.SiteStatus{site("c", "0-3:1-3", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryCloning,
			Request: "c:0-3:1-3", DivergentGtid: "0-3:1-3", PreservedAt: "/var/lib/bloodraven/preserved/orders-c-diverged-20261124T220000Z"})},
			[]string{`reclone "c:0-3:1-3": Cloning`, "preserved at: /var/lib/bloodraven/preserved/orders-c-diverged-20261124T220000Z"}, nil},
		{"rejoined, data kept", []v1alpha1.SiteStatus{site("c", "", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryRejoined,
			Request: "c:0-3:1-3", DivergentGtid: "0-3:1-3", PreservedAt: "/p/orders-c-diverged-x"})},
			[]string{"c: not diverged now", "Rejoined", "errant set when the reclone was accepted: 0-3:1-3 (3 transactions)", "/p/orders-c-diverged-x"}, nil},
		{"failed", []v1alpha1.SiteStatus{site("c", "0-3:1-3", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryFailed,
			Reason: v1alpha1.ReasonCloneFailed, FailedPhase: v1alpha1.RecoveryCloning})},
			[]string{"Failed (CloneFailed in Cloning)", "preserved at: (not yet)"}, nil},
	}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
				Spec:   v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
				Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: "a", Sites: tc.sites}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(g).Build()
			var out bytes.Buffer
			if err := Diverged(t.Context(), c, "shop", "orders", &out); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
