package controller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/grouploop"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// HTTPRecloner is the group loops' Recloner over the sites' sidecars:
// POST /sidecar/reclone on each site's peer port, over mutual TLS with the
// operator's certificate (pkg/reclone). A sidecar that has no such
// endpoint (an older version) answers 404: grouploop.ErrRecloneUnsupported,
// which fails the reclone with RecloneUnavailable before anything is
// touched.
type HTTPRecloner struct {
	Client *reclone.Client
}

// NewHTTPRecloner returns a Recloner over url (nil: the default sidecar
// URL) presenting creds.
func NewHTTPRecloner(url authority.SidecarURL, creds pki.Source) *HTTPRecloner {
	if url == nil {
		url = authority.DefaultSidecarURL
	}
	return &HTTPRecloner{Client: reclone.NewClient(url, creds)}
}

// Run implements grouploop.Recloner.
func (h *HTTPRecloner) Run(ctx context.Context, group types.NamespacedName, site string,
	step grouploop.RecloneStep) (grouploop.RecloneProgress, error) {
	q := reclone.Request{ID: step.Request, Phase: step.Phase, Donor: step.Donor, DivergentGtid: step.DivergentGtid,
		DonorGtid: step.DonorGtid, Generation: step.Generation, Accepted: step.Accepted}
	a, err := h.Client.Do(ctx, group.Namespace, group.Name, site, q)
	if errors.Is(err, reclone.ErrUnsupported) {
		return grouploop.RecloneProgress{}, fmt.Errorf("%w: %w", grouploop.ErrRecloneUnsupported, err)
	}
	if err != nil {
		// A refusal or a transport error: asked again next pass. The
		// refusal's reason is in the error, which the loop logs.
		return grouploop.RecloneProgress{}, err
	}
	return grouploop.RecloneProgress{Done: a.Done, Failed: a.Failed, PreservedAt: a.PreservedAt}, nil
}
