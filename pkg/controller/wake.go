package controller

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// Wake makes the group's poll loop start its next pass now rather than at
// the end of its poll interval. It does nothing when the loop is not running.
func (o *Operator) Wake(key types.NamespacedName) {
	o.mu.Lock()
	h := o.loops[key]
	o.mu.Unlock()
	if h == nil {
		return
	}
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// plannedReconciled wakes the group's loop when g carries a planned-failover
// request: the annotation is acted on at once, not at the next poll.
func (o *Operator) plannedReconciled(key types.NamespacedName, g *v1alpha1.MysqlFailoverGroup) {
	if failover.Requested(g) {
		o.Wake(key)
	}
}
