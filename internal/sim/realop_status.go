package sim

import (
	"context"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// persisted reads the group from the API server and renders what the
// checker and the scripts read.
func (r *realOperator) persisted() *Status {
	r.refresh()
	return r.seen
}

// stored is the group as the API server holds it; callers must not change it.
func (r *realOperator) stored() *v1alpha1.MysqlFailoverGroup {
	r.refresh()
	return r.seenGroup
}

// refresh re-reads the group when the API server was written since.
func (r *realOperator) refresh() {
	if r.seen != nil && r.seenWrites == r.writes {
		return
	}
	r.seenGroup = r.current()
	r.seen, r.seenWrites = r.project(r.seenGroup), r.writes
}

// apiFuncs counts every write to the API server, and serves the group and
// its Pods the fast way (realop_api.go).
func (r *realOperator) apiFuncs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			return c.Create(ctx, o, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if g, ok := o.(*v1alpha1.MysqlFailoverGroup); ok && key == r.key && len(opts) == 0 {
				return r.fast.get(g)
			}
			if handled, err := r.fast.reads.get(ctx, c, key, o, opts...); handled {
				return err
			}
			return c.Get(ctx, key, o, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if handled, err := r.fast.listPods(list, opts...); handled {
				return err
			}
			return c.List(ctx, list, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			return c.Delete(ctx, o, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteAllOfOption) error {
			r.fast.reads.forgetAll()
			return c.DeleteAllOf(ctx, o, opts...)
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, o, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			r.fast.reads.forget(o)
			return c.SubResource(sub).Create(ctx, o, subObj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if r.crash.dead {
				return ErrOperatorDead
			}
			r.writes++
			r.fast.reads.forget(o)
			err := r.fast.statusPatch(ctx, c, sub, o, p, opts...)
			if err == nil {
				r.countCrashWrite(o)
			}
			return err
		},
	}
}

// project renders g as the sim's Status.
func (r *realOperator) project(g *v1alpha1.MysqlFailoverGroup) *Status {
	st := &g.Status
	out := &Status{ActiveSite: st.ActiveSite, Generation: st.TopologyGeneration, History: failover.History(st),
		PlannedRequest: g.Annotations[v1alpha1.PlannedFailoverAnnotation], PromotionExecuted: failover.Promoted(st)}
	if it := st.Failover; it != nil {
		out.Intent = &Intent{From: it.From, To: it.To, Generation: it.Generation, Step: it.Step,
			StartedAt: it.StartTime.Time, ConfirmedBy: it.FenceConfirmedBy}
	}
	if p := st.PlannedFailover; p != nil {
		out.Planned = &PlannedState{Phase: p.Phase, Target: p.Target, Source: p.SourcePrimary, Reason: p.Reason}
	}
	fenced := map[string]bool{}
	for _, s := range strings.Split(g.Annotations[v1alpha1.FencedSitesAnnotation], ",") {
		fenced[s] = true
	}
	for _, s := range g.Spec.Sites {
		rec := SiteRecord{Name: s.Name, MayBeWritable: failover.MaybeWritable(st, s.Name), AdminFenced: fenced[s.Name]}
		for _, ss := range st.Sites {
			if ss.Name == s.Name && ss.DivergentGtid != "" {
				rec.Divergent, _ = gtid.ParseSet(ss.DivergentGtid)
			}
		}
		out.Sites = append(out.Sites, rec)
	}
	if out.ActiveSite == "" && out.Generation == 0 {
		// Before the first pass: the sim's Pods start with the first site active.
		out.ActiveSite = r.w.sites[0].name
	}
	return out
}
