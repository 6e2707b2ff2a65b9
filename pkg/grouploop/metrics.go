package grouploop

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Metrics are the operator's own collectors. NewMetrics registers them on
// a registry (controller-runtime's metrics.Registry in the operator).
type Metrics struct {
	Failovers          *prometheus.CounterVec
	DNSFlips           *prometheus.CounterVec
	SiteState          *prometheus.GaugeVec
	PollLatency        *prometheus.HistogramVec
	ReplicationLag     *prometheus.GaugeVec
	Replicating        *prometheus.GaugeVec
	Reasserts          *prometheus.CounterVec
	ExtraWritersFenced *prometheus.CounterVec
	FailoverBlocked    *prometheus.GaugeVec
	Diverged           *prometheus.GaugeVec
	ConfirmRefused     *prometheus.CounterVec
	SemiSyncClients    *prometheus.GaugeVec
	SemiSyncFallbacks  *prometheus.CounterVec
	Salvaged           *prometheus.CounterVec
	Reclones           *prometheus.CounterVec
	DivergentTxns      *prometheus.GaugeVec
	Routable           *prometheus.GaugeVec
	// PassStartLag is how late each timed pass started against its
	// schedule (the last pass's start plus pollInterval), over all groups:
	// one series, so a thousand groups add no series.
	PassStartLag prometheus.Histogram
	Planned      *PlannedMetrics
}

// Label names.
const (
	labelNamespace = "namespace"
	labelGroup     = "group"
	labelSite      = "site"
	labelState     = "state"
	labelKind      = "kind"
	labelReason    = "reason"
)

// NewMetrics makes the collectors and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	g := []string{labelNamespace, labelGroup}
	s := []string{labelNamespace, labelGroup, labelSite}
	m := &Metrics{
		Failovers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_failovers_total",
			Help: "Completed automatic (emergency) failovers; kind is always emergency. Planned ones: bloodraven_planned_failovers_total."}, append(g, labelKind)),
		DNSFlips: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_dns_flips_total",
			Help: "Changes of the DNSEndpoint's target."}, g),
		SiteState: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_site_state",
			Help: "1 for each site's debounced state, 0 for the other states."}, append(s, labelState)),
		PollLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bloodraven_poll_latency_seconds",
			Help:    "Duration of one probe of a site's mysqld, failed probes included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, s),
		ReplicationLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_replication_lag_seconds",
			Help: "Seconds_Behind_Source of each replica as last probed."}, s),
		Replicating: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_site_replicating",
			Help: "1 while a site's replication runs without error, 0 while it is set up but stopped or failing; " +
				"absent for a site with no replication set up (the primary)."}, s),
		Reasserts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_primary_reasserts_total",
			Help: "Times the active site was found fenced with no other writer and made writable again."}, g),
		ExtraWritersFenced: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_extra_writers_fenced_total",
			Help: "Sites other than the active one found writable and fenced."}, s),
		FailoverBlocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_failover_blocked",
			Help: "1 while a needed failover or re-assertion is blocked, by reason."}, append(g, labelReason)),
		Diverged: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_site_diverged",
			Help: "1 while a site is marked diverged (status.sites[].divergentGtid): it holds transactions the authority's history lacks."}, s),
		ConfirmRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_confirm_authority_refused_total",
			Help: "Confirm-authority annotations refused and removed, by reason (invalid, below-reported, unneeded)."},
			append(g, labelReason)),
		SemiSyncClients: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_semisync_clients",
			Help: "Replicas the active site counts as semi-sync clients, as last probed."}, g),
		SemiSyncFallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_semisync_fallbacks_total",
			Help: "Times the active site was seen to stop waiting for acknowledgements (fallen back to asynchronous replication)."}, g),
		Salvaged: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_salvaged_transactions_total",
			Help: "Transactions failover targets took from old primaries' binlogs before their promotion."}, g),
		Reclones: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bloodraven_reclone_operations_total",
			Help: "Reclone-site requests by result: rejected, rejoined or failed."}, append(g, labelResult)),
		DivergentTxns: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_divergent_transactions",
			Help: "Transactions each site holds that the group's history lacks (status.sites[].divergentGtid)."}, s),
		Routable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bloodraven_site_routable",
			Help: "1 while a site serves reads through the read Services (-replicas, -any), 0 while it does not " +
				"(topology.ReadRoutes; the ReadRoutingChanged Event says why)."}, s),
		PassStartLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bloodraven_pass_start_lag_seconds",
			Help:    "How late a group's timed pass started against its schedule (last start plus pollInterval), all groups.",
			Buckets: []float64{.001, .002, .005, .01, .02, .05, .1, .15, .2, .3, .5, 1, 2, 5, 10}}),
	}
	if reg != nil {
		reg.MustRegister(m.PassStartLag)
		reg.MustRegister(m.Failovers, m.DNSFlips, m.SiteState, m.PollLatency, m.ReplicationLag, m.Replicating,
			m.Reasserts, m.ExtraWritersFenced, m.FailoverBlocked, m.Diverged, m.ConfirmRefused,
			m.SemiSyncClients, m.SemiSyncFallbacks, m.Salvaged, m.Reclones, m.DivergentTxns, m.Routable)
	}
	m.Planned = newPlannedMetrics(reg)
	return m
}

var siteStates = []v1alpha1.SiteState{v1alpha1.StateWritable, v1alpha1.StateReadOnly,
	v1alpha1.StateUnreachable, v1alpha1.StateUnknown}

// setSiteState sets the one-hot state gauge of a site.
func (m *Metrics) setSiteState(ns, group, site string, st v1alpha1.SiteState) {
	for _, s := range siteStates {
		v := 0.0
		if s == st {
			v = 1
		}
		m.SiteState.WithLabelValues(ns, group, site, string(s)).Set(v)
	}
}

// forget drops a deleted group's series.
func (m *Metrics) forget(ns, group string) {
	labels := prometheus.Labels{labelNamespace: ns, labelGroup: group}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Failovers, m.DNSFlips, m.SiteState, m.PollLatency, m.ReplicationLag, m.Replicating, m.Reasserts,
		m.ExtraWritersFenced, m.FailoverBlocked, m.Diverged, m.ConfirmRefused, m.SemiSyncClients, m.SemiSyncFallbacks,
		m.Salvaged, m.Reclones, m.DivergentTxns, m.Routable,
	} {
		v.DeletePartialMatch(labels)
	}
	m.Planned.forget(labels)
}
