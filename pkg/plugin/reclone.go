package plugin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// reclonePrefix is how much of a divergentGtid the printed request repeats:
// more than the eight characters the operator needs, so that two sets
// sharing a start are told apart.
const reclonePrefix = 16

// RecloneValue is the reclone-site annotation value asking for site's
// reclone: the start of its divergentGtid when it is diverged,
// confirm=<group> otherwise (docs/recovery.md).
func RecloneValue(g *v1alpha1.MysqlFailoverGroup, site string) string {
	for _, s := range g.Status.Sites {
		if s.Name == site && s.DivergentGtid != "" {
			return site + ":" + s.DivergentGtid[:min(len(s.DivergentGtid), reclonePrefix)]
		}
	}
	return site + ":confirm=" + g.Name
}

// Reclone shows what a reclone of site would overwrite, asks the person to
// type the site's name (unless yes), and prints the annotate command that
// asks the operator for it. It changes nothing itself.
func Reclone(ctx context.Context, c client.Client, ns, name, site string, yes bool, in io.Reader, w io.Writer) error {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := checkSite(g, site); err != nil {
		return err
	}
	if site == g.Status.ActiveSite {
		return fmt.Errorf("%s in %s/%s: %w", site, ns, name, ErrRecloneActive)
	}
	if err := describeReclone(g, site, w); err != nil {
		return err
	}
	if !yes {
		if _, err := fmt.Fprintf(w, "Type %q to confirm: ", site); err != nil {
			return wrapWrite(err)
		}
		line, _ := bufio.NewReader(in).ReadString('\n')
		if strings.TrimSpace(line) != site {
			return fmt.Errorf("reclone of %s: %w", site, ErrNotConfirmed)
		}
	}
	_, err = fmt.Fprintf(w, "kubectl annotate mfg %s -n %s %s=%s --overwrite\n", name, ns,
		v1alpha1.RecloneSiteAnnotation, RecloneValue(g, site))
	return wrapWrite(err)
}

// describeReclone says what the site holds and what happens to it.
func describeReclone(g *v1alpha1.MysqlFailoverGroup, site string, w io.Writer) error {
	var s v1alpha1.SiteStatus
	for _, x := range g.Status.Sites {
		if x.Name == site {
			s = x
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: a reclone of %s REPLACES ALL ITS DATA with a copy of another site's.\n", g.Namespace, g.Name, site)
	fmt.Fprintf(&b, "  state: %s; gtidExecuted: %s\n", orNone(string(s.State)), orNone(s.GtidExecuted))
	if s.DivergentGtid != "" {
		n := uint64(0)
		if set, err := gtid.ParseSet(s.DivergentGtid); err == nil {
			n = set.Count()
		}
		fmt.Fprintf(&b, "  diverged: %s (%d transactions the group's history lacks); they are saved before the clone\n",
			s.DivergentGtid, n)
	}
	if r := s.Recovery; r != nil && !r.Phase.Terminal() {
		fmt.Fprintf(&b, "  a reclone of it is already running (%s): the operator will refuse another\n", r.Phase)
	}
	_, err := io.WriteString(w, b.String())
	return wrapWrite(err)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
