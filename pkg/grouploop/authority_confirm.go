package grouploop

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Why a confirm-authority annotation was refused: the values of the
// refusal counter's reason label.
const (
	// ConfirmInvalid: the value is not <generation>[:<site>] with a
	// generation from 1 to topology.MaxConfirmGeneration and a site of the group.
	ConfirmInvalid = "invalid"
	// ConfirmBelowReported: a sidecar reports a generation above the one confirmed.
	ConfirmBelowReported = "below-reported"
	// ConfirmUnneeded: no sidecar reports a generation above status.
	ConfirmUnneeded = "unneeded"
)

// parseConfirmAuthority reads <generation>[:<site>]. A generation that does
// not parse (not a number, or beyond int64), is not positive, or is above
// topology.MaxConfirmGeneration, or a site the group does not have, is an
// error wrapping ErrBadConfirmation.
func parseConfirmAuthority(v string, sites []string) (int64, string, error) {
	genText, site, _ := strings.Cut(v, ":")
	gen, err := strconv.ParseInt(genText, 10, 64)
	switch {
	case err != nil:
		return 0, "", fmt.Errorf("%w: %q is not a generation: %w", ErrBadConfirmation, genText, err)
	case gen <= 0 || gen > topology.MaxConfirmGeneration:
		return 0, "", fmt.Errorf("%w: generation %d is not between 1 and %d", ErrBadConfirmation, gen,
			topology.MaxConfirmGeneration)
	case site != "" && !hasSite(sites, site):
		return 0, "", fmt.Errorf("%w: %q is not a site of the group (%v)", ErrBadConfirmation, site, sites)
	}
	return gen, site, nil
}

// confirmRefusal is why a confirmation was not applied: a reason label
// value and a sentence for the Event.
type confirmRefusal struct {
	reason string
	why    string
}

// refusal explains a confirmation that CheckAuthority did not apply.
func refusal(bad error, confirm, reported, status int64) confirmRefusal {
	switch {
	case bad != nil:
		return confirmRefusal{ConfirmInvalid, bad.Error()}
	case reported > topology.MaxConfirmGeneration:
		return confirmRefusal{ConfirmBelowReported, fmt.Sprintf("a sidecar reports generation %d, above any that "+
			"can be confirmed (%d): that sidecar is faulty; repair its stored generation and restart it",
			reported, topology.MaxConfirmGeneration)}
	case reported > status:
		return confirmRefusal{ConfirmBelowReported, fmt.Sprintf("generation %d is below the %d a sidecar reports",
			confirm, reported)}
	}
	return confirmRefusal{ConfirmUnneeded, fmt.Sprintf("no sidecar reports a generation above status (%d)", status)}
}

// refuseConfirmation removes a confirm-authority annotation that was not
// applied, so that it can never confirm a later regression nobody checked,
// then records a Warning Event, counts and logs it: once per value set,
// since the removal tests the value first. Nothing else changes.
func (l *Loop) refuseConfirmation(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, value string, r confirmRefusal) {
	if err := clearAnnotation(ctx, l.env.Client, l.key, v1alpha1.ConfirmAuthorityAnnotation, value); err != nil {
		l.log.Error(err, "remove a refused confirm-authority annotation", "value", value)
		return
	}
	l.env.Metrics.ConfirmRefused.WithLabelValues(g.Namespace, g.Name, r.reason).Inc()
	l.log.Info("confirm-authority refused", "value", value, "reason", r.reason, "why", r.why)
	l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventAuthorityConfirmFailed,
		fmt.Sprintf("%s=%q refused and removed (%s): %s; nothing changed", v1alpha1.ConfirmAuthorityAnnotation,
			value, r.reason, r.why))
}
