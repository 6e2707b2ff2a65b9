package sidecar

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shipstream/bloodraven/pkg/protocol"
)

// Metric names. Every one is declared here only.
const (
	MetricSelfFences     = "bloodraven_sidecar_self_fences_total"
	MetricFenceErrors    = "bloodraven_sidecar_fence_errors_total"
	MetricLeaseRemaining = "bloodraven_sidecar_lease_remaining_seconds"
	MetricContactErrors  = "bloodraven_sidecar_contact_errors_total"
	MetricViewGeneration = "bloodraven_sidecar_view_generation"
	MetricMySQLWritable  = "bloodraven_sidecar_mysqld_writable"
	MetricRefreshes      = "bloodraven_sidecar_refresh_requests_total"
	MetricRefreshTicks   = "bloodraven_sidecar_refresh_ticks_total"
	MetricMySQLDStops    = "bloodraven_sidecar_mysqld_stops_total"
	MetricRejectedViews  = "bloodraven_sidecar_rejected_views_total"
	MetricLeaseFenceArms = "bloodraven_sidecar_lease_fence_arms_total"
	MetricStateErrors    = "bloodraven_sidecar_state_write_errors_total"
)

// Values of LabelReason on MetricRejectedViews: why a view was refused.
const (
	RejectMalformed    = "malformed"
	RejectForeign      = "foreign"
	RejectUnsigned     = "unsigned"
	RejectUnknownKey   = "unknown-key"
	RejectBadSignature = "bad-signature"
	RejectNoKeys       = "no-keys"
	RejectOlder        = "older"
	// RejectUntrustedPeer: the answer did not come from whom the sidecar
	// meant to reach (no TLS, a certificate off the CA, another identity).
	RejectUntrustedPeer = "untrusted-peer"
)

// rejectReasons are every value of LabelReason on MetricRejectedViews.
var rejectReasons = []string{RejectMalformed, RejectForeign, RejectUnsigned, RejectUnknownKey,
	RejectBadSignature, RejectNoKeys, RejectOlder, RejectUntrustedPeer}

// RejectReason names why the loop refused a view (an Ignored's Err), "" when
// err is not a refusal.
func RejectReason(err error) string {
	switch {
	case errors.Is(err, ErrMalformed):
		return RejectMalformed
	case errors.Is(err, ErrForeignView):
		return RejectForeign
	case errors.Is(err, protocol.ErrUnsigned):
		return RejectUnsigned
	case errors.Is(err, protocol.ErrUnknownKey):
		return RejectUnknownKey
	case errors.Is(err, protocol.ErrBadSignature):
		return RejectBadSignature
	case errors.Is(err, protocol.ErrNoKeys):
		return RejectNoKeys
	case errors.Is(err, ErrOlderView):
		return RejectOlder
	}
	return untrustedPeer(err)
}

// Metric labels and the values of LabelKind.
const (
	LabelReason = "reason"
	// LabelHow says how a stop of mysqld ended: StopShutdown, StopKill or StopFailed.
	LabelHow = "how"
	// LabelTarget is "operator" or "peer/<site>".
	LabelTarget = "target"
	// LabelKind says how a contact failed: KindUnreachable, KindMalformed or KindForeign.
	LabelKind = "kind"
	// LabelResult says how an arm of the lease fence ended: ResultOK or ResultFailed.
	LabelResult     = "result"
	ResultOK        = "ok"
	ResultFailed    = "failed"
	KindUnreachable = "unreachable"
	KindMalformed   = "malformed"
	KindForeign     = "foreign"
)

// fenceReasons are every value of LabelReason.
var fenceReasons = []string{ReasonView, ReasonLease, ReasonBoot, ReasonStop}

// metrics are one sidecar's series, on a registry of their own.
type metrics struct {
	reg         *prometheus.Registry
	selfFences  *prometheus.CounterVec
	fenceErrors prometheus.Counter
	// stateWriteErrors counts failed writes of the active record.
	stateWriteErrors prometheus.Counter
	contactErrors    *prometheus.CounterVec
	rejectedViews    *prometheus.CounterVec
	// refreshRequests counts POST /peer/refresh; refreshTicks the ticks they caused.
	refreshRequests, refreshTicks prometheus.Counter
	// mysqldStops counts fences that escalated to stopping mysqld.
	mysqldStops *prometheus.CounterVec
	// leaseFenceArms counts arms of mysqld's lease fence, by result.
	leaseFenceArms *prometheus.CounterVec
}

// newMetrics registers the series. lease, generation and writable are read
// at scrape time.
func newMetrics(targets []string, lease, generation, writable func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		selfFences: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricSelfFences,
			Help: "Fences this sidecar put on its mysqld, by reason."}, []string{LabelReason}),
		fenceErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricFenceErrors,
			Help: "Fence attempts that failed or could not be verified."}),
		stateWriteErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricStateErrors,
			Help: "Failed writes of the active record in the state directory; each is tried again."}),
		contactErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricContactErrors,
			Help: "Failed or ignored contacts with the operator and each peer, by kind."}, []string{LabelTarget, LabelKind}),
		rejectedViews: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRejectedViews,
			Help: "Views refused and ignored (they renew nothing), by reason."}, []string{LabelReason}),
		refreshRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricRefreshes,
			Help: "Refresh requests received (POST /peer/refresh)."}),
		refreshTicks: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricRefreshTicks,
			Help: "Ticks run early because of refresh requests; requests between two ticks make one."}),
		mysqldStops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricMySQLDStops,
			Help: "Fences that could not complete in their budget and stopped mysqld, by how the stop ended."}, []string{LabelHow}),
		leaseFenceArms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricLeaseFenceArms,
			Help: "Times the sidecar pushed mysqld's lease fence (an event that fences it) to its lease's end, by result."},
			[]string{LabelResult}),
	}
	m.reg.MustRegister(m.selfFences, m.fenceErrors, m.stateWriteErrors, m.contactErrors, m.rejectedViews, m.refreshRequests, m.refreshTicks,
		m.mysqldStops, m.leaseFenceArms,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricLeaseRemaining,
			Help: "Time until the lease runs out; at or below zero a writable mysqld is fenced."}, lease),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricViewGeneration,
			Help: "Generation of the cached view of the active site, 0 before any."}, generation),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricMySQLWritable,
			Help: "1 when the last tick saw mysqld accept writes, else 0."}, writable),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	for _, r := range fenceReasons {
		m.selfFences.WithLabelValues(r)
	}
	for _, r := range []string{ResultOK, ResultFailed} {
		m.leaseFenceArms.WithLabelValues(r)
	}
	for _, h := range stopOutcomes {
		m.mysqldStops.WithLabelValues(h)
	}
	for _, r := range rejectReasons {
		m.rejectedViews.WithLabelValues(r)
	}
	for _, t := range targets {
		for _, k := range []string{KindUnreachable, KindMalformed, KindForeign} {
			m.contactErrors.WithLabelValues(t, k)
		}
	}
	return m
}

// contactError counts a failed contact: err wraps ErrUnreachable,
// ErrMalformed or ErrForeignView. A peer that is too old or has no view yet
// is not an error.
func (m *metrics) contactError(target string, err error) {
	switch {
	case errors.Is(err, ErrMalformed):
		m.contactErrors.WithLabelValues(target, KindMalformed).Inc()
	case errors.Is(err, ErrForeignView):
		m.contactErrors.WithLabelValues(target, KindForeign).Inc()
	case errors.Is(err, ErrUnreachable):
		m.contactErrors.WithLabelValues(target, KindUnreachable).Inc()
	}
}

// untrusted counts a contact that failed because whatever answered is not
// whom the sidecar meant to reach (see untrustedPeer).
func (m *metrics) untrusted(err error) {
	if reason := untrustedPeer(err); reason != "" {
		m.rejectedViews.WithLabelValues(reason).Inc()
	}
}
