package authority

import (
	"fmt"
	"net/http"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// Reasons a report is refused for what it says rather than who sent it;
// values of MetricRejectedReports' reason label too.
const (
	// RejectMalformed: a request the API cannot read (400), such as an echo
	// whose sequence number is negative, too long or not a number, or a
	// generation outside 0..topology.MaxGeneration.
	RejectMalformed = "malformed"
	// RejectForgedEcho: a report echoing a view of this operator process
	// numbered higher than any it has served (400): no sidecar received it.
	RejectForgedEcho = "forged-echo"
)

// checkEcho refuses a report that echoes a Seq this process never served
// under its own id. An echo of another process's view is not checked: it
// is never evidence (topology.Report.ObservedAfter).
func (a *API) checkEcho(rep *topology.Report) error {
	if rep == nil || rep.ViewOperator != a.Registry.OperatorID() || rep.ViewSeq == 0 || a.Registry.Served(rep.ViewSeq) {
		return nil
	}
	return fmt.Errorf("%w: echo of view %d, this operator served none above %d", ErrBadRequest,
		rep.ViewSeq, a.Registry.SeqMark()-1)
}

// refuse answers a refused request, after counting it (with a ReportAuth)
// and, for a group this operator knows, logging it and raising an Event
// (rate-limited, ReportAuth.reject). A group it does not know is only
// counted: its name came from the request, and keeping per-group state for
// every name anyone sends would let them grow the operator's memory.
//
// Only a request that proves, with its certificate, the site it names gets
// the log line and Event: anyone who can reach the port can send malformed
// requests, and must not be able to flood a group's Events or logs.
func (a *API) refuse(w http.ResponseWriter, req *http.Request, ar activeRequest, reason string, err error) {
	if a.Auth != nil {
		_, sites, published := a.Registry.View(ar.group)
		if !published {
			sites = a.Registry.knownSites(ar.group)
		}
		if len(sites) > 0 && req.TLS != nil && hasSite(sites, ar.site) {
			if _, derr := a.Auth.decide(req, ar.group, ar.site, sites); derr == nil {
				a.Auth.reject(req.Context(), ar.group, ar.site, reason, err)
				writeError(w, err)
				return
			}
		}
		a.Auth.rejected.WithLabelValues(reason).Inc()
	}
	writeError(w, err)
}
