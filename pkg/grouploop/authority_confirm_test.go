package grouploop

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestConfirmAuthorityRefusals: status holds generation 3 and a's sidecar
// reports a higher one. A confirm-authority value that cannot be applied
// must end with a Warning AuthorityConfirmFailed Event, be counted and
// removed (so it never confirms a later regression nobody checked), and
// change nothing else: no crash, the group still held, the generation as
// it was. Before, such a value was silently ignored and left in place.
func TestConfirmAuthorityRefusals(t *testing.T) {
	cases := []struct {
		name     string
		reported int64
		value    string
		reason   string // "" when the confirmation applies
		gen      int64  // status generation afterwards
	}{
		{"max int64", 7, "9223372036854775807", ConfirmInvalid, 3},
		{"max int64 + 1 overflows the parse", 7, "9223372036854775808", ConfirmInvalid, 3},
		{"above the confirmable range", 7, strconv.FormatInt(topology.MaxConfirmGeneration+1, 10), ConfirmInvalid, 3},
		{"not a number", 7, "seven", ConfirmInvalid, 3},
		{"negative", 7, "-7", ConfirmInvalid, 3},
		{"an unknown site", 7, "7:fra", ConfirmInvalid, 3},
		{"below the reported generation", 7, "6", ConfirmBelowReported, 3},
		{"a faulty sidecar above the confirmable range", topology.MaxGeneration,
			strconv.FormatInt(topology.MaxConfirmGeneration, 10), ConfirmBelowReported, 3},
		{"nothing to confirm", 2, "3", ConfirmUnneeded, 3},
		{"a valid confirmation applies", 7, "7:a", "", 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 3)
			g.Annotations = map[string]string{v1alpha1.ConfirmAuthorityAnnotation: c.value}
			cl := fakeStatusClient(t, g)
			l := testLoop()
			rec := events.NewFakeRecorder(8)
			l.env.Notifier.rec = rec
			l.env.Client, l.env.Reader = cl, cl
			l.env.Registry = authority.NewRegistry(func() time.Time { return t0 })
			l.key = types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
			reportUnpublished(t, l.env.Registry, l.key, siteNames(g), "a", c.reported)
			l.patcher = &statusPatcher{c: cl, reader: cl}
			g = readGroup(t, cl)
			l.patcher.reset(g)
			l.authorityHold(t.Context(), g)

			after := readGroup(t, cl)
			if _, left := after.Annotations[v1alpha1.ConfirmAuthorityAnnotation]; left {
				t.Fatalf("annotation %q left in place", c.value)
			}
			if after.Status.TopologyGeneration != c.gen || after.Status.TopologyGeneration < 0 {
				t.Fatalf("generation %d, want %d", after.Status.TopologyGeneration, c.gen)
			}
			var failed []string
			for len(rec.Events) > 0 {
				if ev := <-rec.Events; strings.Contains(ev, v1alpha1.EventAuthorityConfirmFailed) {
					failed = append(failed, ev)
				}
			}
			for _, reason := range []string{ConfirmInvalid, ConfirmBelowReported, ConfirmUnneeded} {
				want := 0.0
				if reason == c.reason {
					want = 1
				}
				if got := testutil.ToFloat64(l.env.Metrics.ConfirmRefused.WithLabelValues("shop", "orders", reason)); got != want {
					t.Fatalf("refusals counted as %s: %v, want %v", reason, got, want)
				}
			}
			switch {
			case c.reason == "" && len(failed) != 0:
				t.Fatalf("a valid confirmation raised %v", failed)
			case c.reason != "" && (len(failed) != 1 || !strings.Contains(failed[0], c.reason)):
				t.Fatalf("Events %v, want one AuthorityConfirmFailed (%s)", failed, c.reason)
			}
		})
	}
}
