package controller

import (
	"net/http"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// RejectMalformed is MetricRejectedReports' reason for a report that does
// not parse, or carries a generation outside 0..topology.MaxGeneration.
const RejectMalformed = "malformed"

// reportableGeneration reports whether a sidecar may report generation n:
// 0 (none yet) up to topology.MaxGeneration. A larger value is forged or
// corrupted (no operator publishes one); recording it would hold the group
// with AuthorityRegressed beyond any confirmation, and count as adoption.
func reportableGeneration(n int64) bool { return n >= 0 && n <= topology.MaxGeneration }

// refuseMalformed counts and logs a malformed report that names its group
// and site (with a rate-limited ReportRejected Event, ReportAuth.reject).
// The request is answered 400 and nothing is recorded: no evidence, no
// lease renewal, no view.
func (a *API) refuseMalformed(req *http.Request, ar activeRequest, err error) {
	if a.Auth == nil || ar.site == "" || ar.group.Name == "" {
		return
	}
	a.Auth.reject(req.Context(), ar.group, ar.site, RejectMalformed, err)
}
