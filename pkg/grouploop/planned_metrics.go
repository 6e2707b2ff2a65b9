package grouploop

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// PlannedMetrics are the planned failover's collectors. Beside the labels
// the design names (target_site, result) they carry namespace and group, as
// every operator metric does, so that groups with the same site names do
// not add up.
type PlannedMetrics struct {
	Total    *prometheus.CounterVec
	Duration *prometheus.HistogramVec
	LagWait  *prometheus.HistogramVec
	// Dragonfly counts the cache's promotions in planned failovers.
	Dragonfly *prometheus.CounterVec
}

// Planned failover label names.
const (
	labelTargetSite = "target_site"
	labelResult     = "result"
)

func newPlannedMetrics(reg prometheus.Registerer) *PlannedMetrics {
	site := []string{labelNamespace, labelGroup, labelTargetSite}
	m := &PlannedMetrics{
		Total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_planned_failovers_total",
			Help: "Planned-failover requests that ended, by target site and result " +
				"(success, rejected, failed_timeout, failed_other)."}, append(site, labelResult)),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bloodraven_planned_failover_duration_seconds",
			Help:    "Duration of successful planned failovers, from the request to Succeeded.",
			Buckets: []float64{.25, .5, 1, 2, 3, 5, 10, 30, 60, 120, 300, 600}}, site),
		LagWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bloodraven_planned_failover_lag_wait_seconds",
			Help:    "Time planned failovers spent in WaitingForLag, caught up or timed out.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}, site),
		Dragonfly: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_dragonfly_promotions_total",
			Help: "Promotions of a site's Dragonfly in planned failovers, by target site and result " +
				"(success, failed, skipped)."}, append(site, labelResult)),
	}
	if reg != nil {
		reg.MustRegister(m.Total, m.Duration, m.LagWait, m.Dragonfly)
	}
	return m
}

func (m *PlannedMetrics) forget(labels prometheus.Labels) {
	m.Total.DeletePartialMatch(labels)
	m.Duration.DeletePartialMatch(labels)
	m.LagWait.DeletePartialMatch(labels)
	m.Dragonfly.DeletePartialMatch(labels)
}

// The notifier is the planned failover's PlannedNotifier too.
var _ failover.PlannedNotifier = (*Notifier)(nil)

// The notifier counts the cache's promotions too.
var _ failover.CacheNotifier = (*Notifier)(nil)

// DragonflyPromoted implements failover.CacheNotifier.
func (n *Notifier) DragonflyPromoted(g *v1alpha1.MysqlFailoverGroup, target, result string) {
	n.metrics.Planned.Dragonfly.WithLabelValues(g.Namespace, g.Name, target, result).Inc()
}

// PlannedFinished implements failover.PlannedNotifier.
func (n *Notifier) PlannedFinished(g *v1alpha1.MysqlFailoverGroup, target, result string, took time.Duration) {
	pm := n.metrics.Planned
	pm.Total.WithLabelValues(g.Namespace, g.Name, target, result).Inc()
	if result == failover.PlannedResultSuccess {
		pm.Duration.WithLabelValues(g.Namespace, g.Name, target).Observe(took.Seconds())
	}
}

// PlannedLagWaited implements failover.PlannedNotifier.
func (n *Notifier) PlannedLagWaited(g *v1alpha1.MysqlFailoverGroup, target string, waited time.Duration) {
	n.metrics.Planned.LagWait.WithLabelValues(g.Namespace, g.Name, target).Observe(waited.Seconds())
}
