package grouploop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// plannedRunner drives one group's planned failover from its poll loop:
// one phase per pass, with the next pass at once while phases move on, so a
// caught-up switchover takes a handful of passes rather than poll intervals.
type plannedRunner struct {
	m *failover.Planned
	// next is how soon the loop should pass again; has is false when the
	// planned failover does not care (the poll interval then).
	next     time.Duration
	has      bool
	lastWait string
}

func newPlannedRunner(l *Loop) *plannedRunner {
	shared := l.env
	env := failover.PlannedEnv{DB: l.conns, Persister: l.patcher, Publisher: shared.Registry, Notifier: shared.Notifier,
		Annotator: &annotator{c: shared.Client, reader: shared.Reader}, Clock: shared.Clock}
	if shared.Router != nil {
		env.Router = shared.Router
	}
	// The Dragonfly phases run for requests that started with
	// spec.dragonfly.enabled (planned_cache.go).
	env.Cache = l.cache.conns
	if l.cache.router != nil {
		env.CacheRouter = l.cache.router
	}
	// A promotion that waits for the target's sidecar passes again as soon
	// as that sidecar fetches the new view (authority's adoptwake.go). Every loop sets
	// the same hook.
	shared.Registry.NotifyOnAdoption(shared.Wake)
	return &plannedRunner{m: failover.NewPlanned(env)}
}

// plannedAct runs the pass's operation when it belongs to a planned
// failover, and reports whether it did. Extra writers are fenced first: the
// request waits one pass for that.
func (l *Loop) plannedAct(ctx context.Context, p failover.Pass) bool {
	r := l.planned
	r.next, r.has = 0, false
	if k := p.Decision.Kind; failover.Requested(p.Group) && (k == topology.KindFenceExtraWriters || k == topology.KindSplitBrain) {
		r.has = true
		return false
	}
	start := time.Now()
	out, err := r.m.Step(ctx, p)
	l.log.V(1).Info("planned failover step", "phase", out.Phase, "acted", out.Acted, "waiting", out.Waiting,
		"next", out.Next.String(), "took", time.Since(start).String())
	if out.Next >= 0 {
		r.next, r.has = out.Next, true
	}
	switch {
	case err != nil:
		l.log.Error(err, "planned failover", "phase", out.Phase, "waiting", out.Waiting)
	case out.Waiting != "" && out.Waiting != r.lastWait:
		l.log.Info("planned failover waits", "phase", out.Phase, "waiting", out.Waiting)
	case out.Acted && out.Waiting == "":
		l.log.Info("planned failover", "phase", out.Phase, "message", plannedMessage(p.Group),
			"generation", p.Group.Status.TopologyGeneration)
	}
	r.lastWait = out.Waiting
	return out.Acted
}

func plannedMessage(g *v1alpha1.MysqlFailoverGroup) string {
	if b := g.Status.PlannedFailover; b != nil {
		return b.Message
	}
	return ""
}

// plannedNext is how soon the planned failover wants the next pass.
func (l *Loop) plannedNext() (time.Duration, bool) {
	if l.planned == nil || !l.planned.has {
		return 0, false
	}
	return l.planned.next, true
}

// annotator removes answered planned-failover requests. It implements failover.Annotator.
type annotator struct {
	c      client.Client
	reader client.Reader
}

// ClearPlannedRequest implements failover.Annotator.
func (a *annotator) ClearPlannedRequest(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, value string) error {
	return a.clear(ctx, g, v1alpha1.PlannedFailoverAnnotation, value)
}

// clear removes annotation key with a JSON patch that tests the value
// before removing it, so a request written meanwhile stays.
func (a *annotator) clear(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, key, value string) error {
	path := "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
	body, err := json.Marshal([]map[string]any{{"op": "test", "path": path, "value": value}, {"op": "remove", "path": path}})
	if err != nil {
		return fmt.Errorf("%s annotation patch: %w", key, err)
	}
	obj := &v1alpha1.MysqlFailoverGroup{}
	obj.Namespace, obj.Name = g.Namespace, g.Name
	perr := a.c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(routing.FieldOwner))
	if perr == nil {
		return nil
	}
	// The test failed or the patch did not go through: a value other than
	// ours (or none) means there is nothing of ours to remove.
	fresh := &v1alpha1.MysqlFailoverGroup{}
	if err := a.reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return fmt.Errorf("remove the %s annotation of %s/%s: %w (re-read: %w)", key, g.Namespace, g.Name, perr, err)
	}
	if v, ok := fresh.Annotations[key]; !ok || v != value {
		return nil
	}
	return fmt.Errorf("remove the %s annotation of %s/%s: %w", key, g.Namespace, g.Name, perr)
}
