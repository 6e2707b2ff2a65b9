//go:build envtest

package v1alpha1_test

import (
	"strings"
	"testing"
)

// TestServiceTemplateInputTheServiceAPIRefuses: spec.services input
// that the CRD accepts but the Service API then refuses makes Converge fail
// on every reconcile (it returns at the first object it cannot apply, so
// every object after the role Services — Deployments, PVCs, DNSEndpoint —
// stops converging), with the API server's words about a Service, not the
// group's field. The CRD must refuse it with clear words instead.
func TestServiceTemplateInputTheServiceAPIRefuses(t *testing.T) {
	lb := func(ranges ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"type": "LoadBalancer", "loadBalancerSourceRanges": ranges}}
	}
	cases := []struct {
		name string
		edit func(obj map[string]any)
		want string
	}{
		{"source range not a CIDR", func(o map[string]any) { set(o, "services.template", lb("not-a-cidr")) },
			"loadBalancerSourceRanges"},
		{"source range prefix too long", func(o map[string]any) { set(o, "services.template", lb("10.0.0.0/33")) },
			"loadBalancerSourceRanges"},
		{"template label key not a label key", func(o map[string]any) {
			set(o, "services.template", map[string]any{"metadata": map[string]any{"labels": map[string]any{"bad key!": "x"}}})
		}, "label"},
		{"template label value too long", func(o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "lb", "selectorType": "rw",
				"serviceTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": strings.Repeat("x", 64)}}}}})
		}, "label"},
		{"additional Service name too long for a Service", func(o map[string]any) {
			// <group>-<name> must be a DNS-1035 label of at most 63 characters.
			set(o, "services.additional", []any{map[string]any{"name": strings.Repeat("a", 40), "selectorType": "rw"}})
			o["metadata"].(map[string]any)["name"] = "review-" + strings.Repeat("g", 20)
		}, "63"},
		// Read-through: <group>-dragonfly and <group>-<site>-dragonfly are
		// the cache's Services; an additional Service of that name would
		// flip selectors with it on every Converge.
		{"additional Service named as the cache's Service", func(o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "dragonfly", "selectorType": "rw"}})
		}, "dragonfly"},
		{"site named as the cache's Service", func(o map[string]any) {
			o["spec"].(map[string]any)["sites"].([]any)[0].(map[string]any)["name"] = "dragonfly"
		}, "dragonfly"},
		{"additional Service named as a site's cache Service", func(o map[string]any) {
			set(o, "services.additional", []any{map[string]any{"name": "east-dragonfly", "selectorType": "rw"}})
		}, "dragonfly"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := minimal("review-svc-" + string(rune('a'+i)))
			c.edit(obj)
			err := create(t, obj)
			if err == nil {
				t.Fatalf("accepted; the Service API refuses this, so Converge would fail on every pass. Want rejection containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rejected with\n  %v\nwant a message containing %q", err, c.want)
			}
		})
	}
}
