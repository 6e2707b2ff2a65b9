package grouploop

import (
	"sync"

	"k8s.io/client-go/tools/events"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Notifier records Events through the manager's recorder and counts metrics.
// It implements failover.Notifier.
type Notifier struct {
	rec     events.EventRecorder
	metrics *Metrics

	mu   sync.Mutex
	last map[string]string // group/reason -> last message, for once-per-change Events
}

// Event implements failover.Notifier.
func (n *Notifier) Event(g *v1alpha1.MysqlFailoverGroup, eventType, reason, message string) {
	if n.rec != nil {
		n.rec.Eventf(g, nil, eventType, reason, reason, "%s", message)
	}
}

// EventOnChange records an Event unless the last one of this reason for this
// group said the same; state reports (blocked, degraded) would repeat every pass.
func (n *Notifier) EventOnChange(g *v1alpha1.MysqlFailoverGroup, eventType, reason, message string) {
	key := g.Namespace + "/" + g.Name + "/" + reason
	n.mu.Lock()
	same := n.last[key] == message
	if n.last == nil {
		n.last = map[string]string{}
	}
	n.last[key] = message
	n.mu.Unlock()
	if !same {
		n.Event(g, eventType, reason, message)
	}
}

// clearOnChange forgets the last message of a reason, so the next one is recorded.
func (n *Notifier) clearOnChange(g *v1alpha1.MysqlFailoverGroup, reason string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.last, g.Namespace+"/"+g.Name+"/"+reason)
}

// FailoverCompleted implements failover.Notifier. bloodraven_failovers_total
// counts automatic failovers only (seed 002): a planned one is counted by
// bloodraven_planned_failovers_total.
func (n *Notifier) FailoverCompleted(g *v1alpha1.MysqlFailoverGroup, kind v1alpha1.FailoverKind) {
	if kind != v1alpha1.KindEmergency {
		return
	}
	n.metrics.Failovers.WithLabelValues(g.Namespace, g.Name, string(kind)).Inc()
}

// Salvaged implements failover.Notifier.
func (n *Notifier) Salvaged(g *v1alpha1.MysqlFailoverGroup, count int64) {
	n.metrics.Salvaged.WithLabelValues(g.Namespace, g.Name).Add(float64(count))
}

// DNSFlipped implements failover.Notifier.
func (n *Notifier) DNSFlipped(g *v1alpha1.MysqlFailoverGroup) {
	n.metrics.DNSFlips.WithLabelValues(g.Namespace, g.Name).Inc()
}
