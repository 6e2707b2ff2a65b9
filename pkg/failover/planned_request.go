package failover

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// PlannedRequest is a parsed planned-failover annotation value.
type PlannedRequest struct {
	// Target is the site to promote.
	Target string
	// MaxLagWait overrides spec.plannedFailover.maxLagWait; zero keeps the spec's.
	MaxLagWait time.Duration
}

// Limits of the annotation grammar.
const (
	// maxSiteName is the CRD's limit on a site name.
	maxSiteName = 40
	// MaxRequestLagWait is the longest maxLagWait a request may ask for.
	MaxRequestLagWait = 24 * time.Hour
	// optMaxLagWait is the one option the grammar knows.
	optMaxLagWait = "maxLagWait"
)

var (
	siteLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// durationText is the CRD's duration pattern: Go durations without a sign
	// and with a unit on every number.
	durationText = regexp.MustCompile(`^([0-9]+([.][0-9]+)?(ms|s|m|h))+$`)
)

// ParsePlannedRequest parses the value of the planned-failover annotation,
// strictly:
//
//	value  = site [ ":" option { "," option } ]
//	site   = a DNS label of at most 40 characters, as spec.sites[].name
//	option = "maxLagWait=" duration
//
// where duration is a positive Go duration with a unit on every number (30s,
// 1m30s, 500ms), at most 24h. Nothing is trimmed or case-folded, and an option
// may not repeat. Errors wrap ErrInvalidRequest and say what is wrong.
func ParsePlannedRequest(value string) (PlannedRequest, error) {
	site, opts, hasOpts := strings.Cut(value, ":")
	if err := checkSite(site); err != nil {
		return PlannedRequest{}, fmt.Errorf("%w: %q: %w", ErrInvalidRequest, value, err)
	}
	r := PlannedRequest{Target: site}
	if !hasOpts {
		return r, nil
	}
	if opts == "" {
		return PlannedRequest{}, fmt.Errorf("%w: %q: nothing after ':' (want %s=<duration>)",
			ErrInvalidRequest, value, optMaxLagWait)
	}
	seen := map[string]bool{}
	for _, opt := range strings.Split(opts, ",") {
		if err := r.option(opt, seen); err != nil {
			return PlannedRequest{}, fmt.Errorf("%w: %q: %w", ErrInvalidRequest, value, err)
		}
	}
	return r, nil
}

func checkSite(site string) error {
	switch {
	case site == "":
		return fmt.Errorf("no target site")
	case len(site) > maxSiteName:
		return fmt.Errorf("site name longer than %d characters", maxSiteName)
	case !siteLabel.MatchString(site):
		return fmt.Errorf("site %q is not a DNS label (lower-case letters, digits and '-')", site)
	}
	return nil
}

// option parses one key=value option into r.
func (r *PlannedRequest) option(opt string, seen map[string]bool) error {
	key, val, ok := strings.Cut(opt, "=")
	switch {
	case !ok:
		return fmt.Errorf("option %q is not key=value", opt)
	case key != optMaxLagWait:
		return fmt.Errorf("unknown option %q (the only option is %s)", key, optMaxLagWait)
	case seen[key]:
		return fmt.Errorf("option %s given twice", key)
	}
	seen[key] = true
	d, err := parseLagWait(val)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	r.MaxLagWait = d
	return nil
}

func parseLagWait(val string) (time.Duration, error) {
	if !durationText.MatchString(val) {
		return 0, fmt.Errorf("%q is not a duration such as 30s or 5m", val)
	}
	d, err := time.ParseDuration(val)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q: %w", val, err)
	case d <= 0:
		return 0, fmt.Errorf("%q must be positive", val)
	case d > MaxRequestLagWait:
		return 0, fmt.Errorf("%q is longer than %s", val, MaxRequestLagWait)
	}
	return d, nil
}
