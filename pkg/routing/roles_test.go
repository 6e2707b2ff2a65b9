package routing

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestPatchOrder: SetRoleLabels patches the Pods losing the primary role
// first (the -primary Service never selects two sites), then the new
// primary (clients reach it before the replicas' patches land), then the
// other replicas, and skips Pods already labelled right.
func TestPatchOrder(t *testing.T) {
	pod := func(site, role string) corev1.Pod {
		labels := map[string]string{v1alpha1.LabelSite: site}
		if role != "" {
			labels[v1alpha1.LabelRole] = role
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: site, Labels: labels}}
	}
	const p, r = v1alpha1.RolePrimary, v1alpha1.RoleReplica
	cases := []struct {
		name    string
		pods    []corev1.Pod
		primary string
		want    []string
	}{
		{"planned failover ends: the drained source has no role, the target is listed after it",
			[]corev1.Pod{pod("a", ""), pod("b", r)}, "b", []string{"b", "a"}},
		{"emergency failover: the old primary loses the role before the target gains it",
			[]corev1.Pod{pod("c", ""), pod("b", r), pod("a", p)}, "b", []string{"a", "b", "c"}},
		{"target listed first still waits for the old primary's demotion",
			[]corev1.Pod{pod("b", r), pod("a", p)}, "b", []string{"a", "b"}},
		{"drain: only the primary changes", []corev1.Pod{pod("a", p), pod("b", r)}, "", []string{"a"}},
		{"nothing to change", []corev1.Pod{pod("a", p), pod("b", r)}, "a", nil},
		{"a restarted target Pod comes back a replica", []corev1.Pod{pod("a", r), pod("b", r)}, "a", []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, i := range patchOrder(c.pods, c.primary) {
				got = append(got, c.pods[i].Name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("patched %v, want %v", got, c.want)
			}
		})
	}
}
