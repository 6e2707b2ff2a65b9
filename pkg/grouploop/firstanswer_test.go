package grouploop

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestNeverAnsweredActiveSite feeds probes of a two-site group (iad active,
// pdx a read-only replica; failureThreshold 3, recoveryThreshold 2) through
// the loop's debouncers and the real Decide: an active site that never
// answered since the group was created shows unknown and is not failed
// over from; one that answered once, in this operator's life or (after a
// restart) on record in the status, shows unreachable and is.
func TestNeverAnsweredActiveSite(t *testing.T) {
	const (
		F = topology.ProbeFailed
		W = topology.ProbeWritable
	)
	lt := metav1.NewTime(t0.Add(-time.Hour))
	cases := []struct {
		name string
		// gen, lastFailover and iad are the persisted status the loop starts from.
		gen          int64
		lastFailover bool
		iad          v1alpha1.SiteStatus
		probes       []topology.Probe // iad's probes; pdx answers read-only each time
		want         v1alpha1.SiteState
		wantFailover bool
		wantLTT      bool // iad's recorded lastTransitionTime
	}{
		{name: "fresh group, active not probed yet", gen: 1, iad: v1alpha1.SiteStatus{Name: "iad"},
			want: v1alpha1.StateUnknown},
		{name: "fresh group, active never answered: unknown, no failover", gen: 1,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{F, F, F, F, F, F},
			want: v1alpha1.StateUnknown},
		{name: "fresh group, active answers late: writable at once", gen: 1,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{F, F, F, F, W},
			want: v1alpha1.StateWritable, wantLTT: true},
		{name: "active answered once then died: unreachable, failover", gen: 1,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{F, F, F, F, W, F, F, F},
			want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "active answered, died before threshold: keeps writable", gen: 1,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{W, F, F},
			want: v1alpha1.StateWritable, wantLTT: true},
		{name: "operator restarted, status shows active writable: failover after threshold", gen: 1,
			iad:    v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateWritable, LastTransitionTime: &lt},
			probes: []topology.Probe{F, F, F}, want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "operator restarted, status shows active writable: waits for threshold", gen: 1,
			iad:    v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateWritable, LastTransitionTime: &lt},
			probes: []topology.Probe{F, F}, want: v1alpha1.StateUnknown, wantLTT: true},
		{name: "operator restarted twice, state unknown but transition on record: failover", gen: 1,
			iad:    v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateUnknown, LastTransitionTime: &lt},
			probes: []topology.Probe{F, F, F}, want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "operator restarted, status shows active read-only: unreachable", gen: 1,
			iad:    v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateReadOnly},
			probes: []topology.Probe{F, F, F}, want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "operator restarted, generation past the first: unreachable", gen: 2,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{F, F, F},
			want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "operator restarted, a failover on record: unreachable", gen: 1, lastFailover: true,
			iad: v1alpha1.SiteStatus{Name: "iad"}, probes: []topology.Probe{F, F, F},
			want: v1alpha1.StateUnreachable, wantFailover: true, wantLTT: true},
		{name: "operator restarted, nothing on record: unknown, no failover", gen: 1,
			iad: v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateUnknown}, probes: []topology.Probe{F, F, F, F},
			want: v1alpha1.StateUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
				Spec: v1alpha1.MysqlFailoverGroupSpec{FailureThreshold: 3, RecoveryThreshold: 2,
					Sites: []v1alpha1.Site{{Name: "iad", Role: v1alpha1.RolePrimaryCandidate},
						{Name: "pdx", Role: v1alpha1.RolePrimaryCandidate}}},
				Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: "iad", TopologyGeneration: c.gen,
					Sites: []v1alpha1.SiteStatus{c.iad, {Name: "pdx", State: v1alpha1.StateReadOnly}}}}
			if c.lastFailover {
				g.Status.LastFailover = &v1alpha1.FailoverRecord{From: "pdx", To: "iad"}
			}
			l := testLoop()
			l.patcher = &statusPatcher{}
			l.patcher.reset(g)
			l.deb, l.obs, l.last, l.answered = map[string]*topology.Debouncer{}, map[string]observation{},
				map[string]observation{}, map[string]bool{}
			l.ensureDebouncers(g)
			ro := mysql.Status{ReadOnly: true, Replica: &mysql.ReplicaStatus{IORunning: mysql.ThreadYes, SQLRunning: true}}
			for i, p := range c.probes {
				at := t0.Add(time.Duration(i) * time.Second)
				o := observation{at: at}
				if p == F {
					o.err = errors.New("connection refused")
				}
				l.obs = map[string]observation{"iad": o, "pdx": {status: ro, at: at}}
				for _, s := range g.Spec.Sites {
					if l.obs[s.Name].err == nil {
						l.last[s.Name] = l.obs[s.Name]
					}
					l.firstAnswer(g, s.Name, l.obs[s.Name].probe())
					if _, _, err := l.deb[s.Name].Observe(at, l.obs[s.Name].probe()); err != nil {
						t.Fatal(err)
					}
				}
				l.recordSites(g) // every pass records, as the loop does
			}
			ev := func(site string) topology.Evidence { return topology.Evidence{Site: site, Now: t0} }
			var in topology.Input
			in.ActiveSite, in.Generation, in.Now = "iad", c.gen, t0
			for _, s := range g.Spec.Sites {
				in.Sites = append(in.Sites, l.siteView(g, s, ev))
			}
			in = topology.Judge(in) // as buildPass: the pass's readers see the shown state
			if got := in.Sites[0].State; got != c.want {
				t.Errorf("iad shown %s, want %s", got, c.want)
			}
			if got := failover.SiteRecord(&g.Status, "iad").State; got != c.want && len(c.probes) > 0 {
				t.Errorf("iad recorded %s, want %s", got, c.want)
			}
			if got := failover.SiteRecord(&g.Status, "iad").LastTransitionTime != nil; got != c.wantLTT {
				t.Errorf("iad lastTransitionTime recorded = %v, want %v", got, c.wantLTT)
			}
			d, err := topology.Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			failed := d.Kind == topology.KindFailover || d.Wanted == topology.KindFailover
			if failed != c.wantFailover {
				t.Errorf("decision %s: failover = %v, want %v", d, failed, c.wantFailover)
			}
			if c.want == v1alpha1.StateUnknown {
				if d.Kind != topology.KindDegraded || d.Reason != v1alpha1.ReasonNotReady {
					t.Errorf("decision %s, want Degraded/NotReady", d)
				}
				never := !c.wantLTT
				if got := strings.Contains(d.Message, "has not answered since the group was created"); got != never {
					t.Errorf("message %q: says never answered = %v, want %v", d.Message, got, never)
				}
			}
		})
	}
}
