package grouploop

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// statusPatcher is the one way a group's status is written. It keeps the
// last status read from or written to the API server as its base, skips the
// write when nothing changed, and patches with an optimistic lock: a
// conflict (someone changed the object since) re-reads the object and
// applies this status again on top, unless the authority moved meanwhile
// (authorityMoved): then the write is abandoned with ErrAuthorityMoved and
// every later write of the pass too, until reset. A write never lowers the
// generation. The operator is the status's only writer, so the authority
// moving under a pass means another operator process (a former leader that
// was paused, or the new one) acted. It implements failover.Persister.
type statusPatcher struct {
	c      client.Client
	reader client.Reader
	base   *v1alpha1.MysqlFailoverGroup
	// read is the status as read at the pass's start (reset), before the
	// pass acted: record tells from it what the act changed.
	read v1alpha1.MysqlFailoverGroupStatus
	// abandoned is set when a write of this pass found the authority moved.
	abandoned bool
	// foreign is set when a write of this pass met another writer's change
	// and wrote again on top: the base is no longer what the pass decided
	// on, so no claim may be written on it (PersistStatusExclusive).
	foreign bool
}

// maxConflictRetries bounds re-reads after conflicts in one write.
const maxConflictRetries = 3

// reset makes g, as just read, the base and the pass's starting point.
func (p *statusPatcher) reset(g *v1alpha1.MysqlFailoverGroup) {
	p.base = g.DeepCopy()
	p.read = *g.Status.DeepCopy()
	p.abandoned, p.foreign = false, false
}

// PersistStatus writes g.Status unless it equals the base's.
func (p *statusPatcher) PersistStatus(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	if err := p.guard(g); err != nil {
		return err
	}
	if p.base != nil && equality.Semantic.DeepEqual(p.base.Status, g.Status) {
		return nil
	}
	want := g.Status.DeepCopy()
	for range maxConflictRetries {
		base := p.base
		if base == nil {
			base = g.DeepCopy()
			base.Status = v1alpha1.MysqlFailoverGroupStatus{}
		}
		patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
		err := p.c.Status().Patch(ctx, g, patch)
		if err == nil {
			p.base = g.DeepCopy()
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("patch status of %s/%s: %w", g.Namespace, g.Name, err)
		}
		fresh := &v1alpha1.MysqlFailoverGroup{}
		if err := p.reader.Get(ctx, client.ObjectKeyFromObject(g), fresh); err != nil {
			return fmt.Errorf("re-read %s/%s after conflict: %w", g.Namespace, g.Name, err)
		}
		if base != nil && (authorityMoved(&base.Status, &fresh.Status) || clearsLeaseFenceMark(want, &fresh.Status)) {
			p.base, p.abandoned = fresh.DeepCopy(), true
			*g = *fresh
			return fmt.Errorf("patch status of %s/%s: %w", g.Namespace, g.Name, ErrAuthorityMoved)
		}
		p.base, p.foreign = fresh.DeepCopy(), true
		fresh.Status = *want.DeepCopy()
		*g = *fresh
	}
	return fmt.Errorf("patch status of %s/%s: %w", g.Namespace, g.Name, ErrConflict)
}
