package plugin

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestReclone: the command shows what is overwritten, asks, and prints an
// annotation the operator's parser accepts for that site; it refuses the
// active site, an unknown site and a wrong answer, and changes nothing.
func TestReclone(t *testing.T) {
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
		Spec: v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: "a", Sites: []v1alpha1.SiteStatus{
			{Name: "b", State: v1alpha1.StateReadOnly, GtidExecuted: "0-1:1-10"},
			{Name: "c", State: v1alpha1.StateReadOnly, DivergentGtid: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3"}}}}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(g).Build()
	cases := []struct {
		name, site, answer string
		yes                bool
		value              string
		err                error
	}{
		{name: "diverged, confirmed", site: "c", answer: "c\n", value: "c:3e11fa47-71ca-11"},
		{name: "not diverged, --yes", site: "b", yes: true, value: "b:confirm=orders"},
		{name: "wrong answer", site: "c", answer: "yes\n", err: ErrNotConfirmed},
		{name: "no answer", site: "c", err: ErrNotConfirmed},
		{name: "the active site", site: "a", yes: true, err: ErrRecloneActive},
		{name: "unknown site", site: "z", yes: true, err: ErrUnknownSite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Reclone(t.Context(), c, "shop", "orders", tc.site, tc.yes, strings.NewReader(tc.answer), &out)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || strings.Contains(out.String(), "kubectl annotate") {
					t.Fatalf("err %v, want %v; output:\n%s", err, tc.err, out.String())
				}
				return
			}
			want := "kubectl annotate mfg orders -n shop " + v1alpha1.RecloneSiteAnnotation + "=" + tc.value + " --overwrite\n"
			if err != nil || !strings.HasSuffix(out.String(), want) || !strings.Contains(out.String(), "REPLACES ALL ITS DATA") {
				t.Fatalf("err %v; output:\n%s\nwant it to end with %s", err, out.String(), want)
			}
			req, perr := topology.ParseRecloneRequest(tc.value)
			if perr != nil || req.Site != tc.site {
				t.Fatalf("the printed value does not parse: %v", perr)
			}
			if req.Prefix != "" && (len(req.Prefix) < topology.MinReclonePrefix ||
				!strings.HasPrefix(g.Status.Sites[1].DivergentGtid, req.Prefix)) {
				t.Fatalf("prefix %q would be refused", req.Prefix)
			}
		})
	}
}
