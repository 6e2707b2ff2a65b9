package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Diverged lists the group's diverged sites (status.sites[].divergentGtid)
// and the data kept of earlier ones: for each, the errant GTID set and how
// many transactions it names, the reclone under way or last run, and where
// its earlier data was preserved (recovery.preservedAt, on the site's
// data volume, never deleted by Bloodraven). It reads status only.
func Diverged(ctx context.Context, c client.Client, ns, name string, w io.Writer) error {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return err
	}
	var b strings.Builder
	n := 0
	for _, site := range g.Spec.Sites {
		s := siteStatus(g, site.Name)
		r := s.Recovery
		kept := r != nil && r.PreservedAt != ""
		if s.DivergentGtid == "" && !kept {
			continue
		}
		n++
		describeDiverged(&b, s)
	}
	if n == 0 {
		fmt.Fprintf(&b, "%s/%s: no diverged site, and no preserved data on record\n", ns, name)
	}
	_, err = io.WriteString(w, b.String())
	return wrapWrite(err)
}

func describeDiverged(b *strings.Builder, s v1alpha1.SiteStatus) {
	r := s.Recovery
	switch {
	case s.DivergentGtid != "":
		fmt.Fprintf(b, "%s: diverged: %s (%d transactions the group's history lacks)\n", s.Name, s.DivergentGtid, count(s.DivergentGtid))
	default:
		fmt.Fprintf(b, "%s: not diverged now\n", s.Name)
	}
	if r == nil {
		fmt.Fprintf(b, "  no reclone yet: its data is kept as it is (kubectl bloodraven reclone)\n")
		return
	}
	fmt.Fprintf(b, "  reclone %q: %s", r.Request, r.Phase)
	if r.Phase == v1alpha1.RecoveryFailed {
		fmt.Fprintf(b, " (%s in %s)", r.Reason, orNone(string(r.FailedPhase)))
	}
	b.WriteString("\n")
	if r.DivergentGtid != "" && r.DivergentGtid != s.DivergentGtid {
		fmt.Fprintf(b, "  errant set when the reclone was accepted: %s (%d transactions)\n", r.DivergentGtid, count(r.DivergentGtid))
	}
	if r.PreservedAt != "" {
		fmt.Fprintf(b, "  preserved at: %s (the errant set in divergent-gtid; the old datadir, binlogs included, in datadir/ once cloned)\n",
			r.PreservedAt)
	} else {
		fmt.Fprintf(b, "  preserved at: (not yet)\n")
	}
}

func count(set string) uint64 {
	s, err := gtid.ParseSet(set)
	if err != nil {
		return 0
	}
	return s.Count()
}

func siteStatus(g *v1alpha1.MysqlFailoverGroup, site string) v1alpha1.SiteStatus {
	for _, s := range g.Status.Sites {
		if s.Name == site {
			return s
		}
	}
	return v1alpha1.SiteStatus{Name: site}
}
