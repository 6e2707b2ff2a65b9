package scenario

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{26, "reclone-diverged", "an isolated primary diverges; a reclone of the active site is refused; the confirmed " +
		"reclone of the old primary brings it back as a replica with the new primary's data and none of its errant rows, " +
		"never a second writer", recloneDiverged})
}

func recloneDiverged(ctx context.Context, e *Env) Result {
	return play(ctx, e, "reclone-diverged", Plan{}, recloneBody)
}

// recloneBody: site-a is cut off and takes writes until its fence, site-b
// is promoted, the cut heals and the loss is read: site-a is divergent.
// Then, with the load running on every site: the plugin and the operator
// refuse a reclone of site-b (the active site), the plugin's reclone of
// site-a is applied, and site-a must rejoin as a read-only replica whose
// data equals site-b's, with none of the writes the failover discarded.
func recloneBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	if err := g.promotedTakesWrites(ctx, l, b, cut); err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, a, true, cut, 0); err != nil {
		r.Failf("%s took no write after the cut: nothing errant to reclone away", a)
	}
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return err
	}
	lost := *mg.Status.LastFailover.TransactionsLost
	if _, err := g.Wait(ctx, a+" divergent", time.Minute, func(mg *v1alpha1.MysqlFailoverGroup) error {
		if s := siteStatus(mg, a); s == nil || s.DivergentGtid == "" {
			return fmt.Errorf("%s not divergent", a)
		}
		return nil
	}); err != nil {
		return err
	}
	g.recloneActiveRefused(ctx, r, b)
	g.forgedReclone(ctx, r, a)
	l.Mark("reclone")
	out, err := g.plugin(ctx, "reclone", g.Name, a, "--yes")
	if err != nil {
		return err
	}
	if err := g.applyPrinted(ctx, out); err != nil {
		return err
	}
	if err := g.waitRejoined(ctx, r, a, 5*time.Minute); err != nil {
		return err
	}
	if err := g.WaitActive(ctx, b, 2, time.Minute); err != nil {
		r.Failf("%s not active at generation 2 after the reclone: %v", b, err)
	}
	if _, err := l.WaitAck(ctx, a, true, time.Now(), 0); err == nil {
		r.Broken++
		r.Failf("%s acknowledged a write after its reclone: a second writer", a)
	}
	h := r.stop(ctx, l)
	rep := r.judge(h, lost)
	g.compareSites(ctx, r, a, b, rep.Lost)
	return nil
}

// errStopWaiting ends a Group.Wait at once: what it waits for will not come.
var errStopWaiting = errors.New("will not happen")

// siteStatus is site's entry in status, or nil.
func siteStatus(mg *v1alpha1.MysqlFailoverGroup, site string) *v1alpha1.SiteStatus {
	for i := range mg.Status.Sites {
		if mg.Status.Sites[i].Name == site {
			return &mg.Status.Sites[i]
		}
	}
	return nil
}

// plugin runs bin/kubectl-bloodraven against the cluster in the group's
// namespace.
func (g *Group) plugin(ctx context.Context, args ...string) (string, error) {
	bin := filepath.Join(g.e.Root, "bin", "kubectl-bloodraven")
	cmd := exec.CommandContext(ctx, bin, append(args, "-n", g.NS, "--kubeconfig", g.e.C.Kubeconfig())...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl-bloodraven %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// applyPrinted runs the kubectl command the plugin printed last.
func (g *Group) applyPrinted(ctx context.Context, out string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.Fields(lines[len(lines)-1])
	if len(last) < 2 || last[0] != "kubectl" || last[1] != "annotate" {
		return fmt.Errorf("the plugin printed no annotate command: %q", out)
	}
	_, err := g.e.C.Kubectl(ctx, last[1:]...)
	return err
}

// recloneActiveRefused: the plugin will not print a reclone of the active
// site, and the operator refuses the annotation written by hand, removing
// it, with the site still the writable primary.
func (g *Group) recloneActiveRefused(ctx context.Context, r *Result, active string) {
	if out, err := g.plugin(ctx, "reclone", g.Name, active, "--yes"); err == nil {
		r.Broken++
		r.Failf("the plugin printed a reclone of the active site %s: %s", active, out)
	}
	since := time.Now()
	if _, err := g.e.C.Kubectl(ctx, "-n", g.NS, "annotate", "mfg", g.Name, "--overwrite",
		v1alpha1.RecloneSiteAnnotation+"="+active+":confirm="+g.Name); err != nil {
		r.Failf("annotate: %v", err)
		return
	}
	_, err := g.Wait(ctx, "the reclone of the active site refused", time.Minute, func(mg *v1alpha1.MysqlFailoverGroup) error {
		rej := mg.Status.LastRecloneRejection
		switch {
		case rej == nil || rej.Request != active+":confirm="+g.Name || rej.Time.Time.Before(since.Add(-time.Second)):
			return fmt.Errorf("no rejection yet")
		case mg.Annotations[v1alpha1.RecloneSiteAnnotation] != "":
			return fmt.Errorf("annotation still there")
		}
		if s := siteStatus(mg, active); s != nil && s.Recovery != nil && !s.Recovery.Phase.Terminal() {
			return fmt.Errorf("a reclone of the active site runs: %s", s.Recovery.Phase)
		}
		return nil
	})
	if err != nil {
		r.Broken++
		r.Failf("a reclone of the active site %s was not refused: %v", active, err)
		return
	}
	r.Notef("a reclone of the active site %s was refused", active)
}

// waitRejoined waits for site's reclone to rejoin, failing on Failed.
func (g *Group) waitRejoined(ctx context.Context, r *Result, site string, within time.Duration) error {
	var last v1alpha1.RecoveryPhase
	mg, err := g.Wait(ctx, site+" rejoined", within, func(mg *v1alpha1.MysqlFailoverGroup) error {
		s := siteStatus(mg, site)
		if s == nil || s.Recovery == nil {
			return fmt.Errorf("no reclone of %s in status", site)
		}
		if s.Recovery.Phase != last {
			last = s.Recovery.Phase
			g.e.Logf("reclone of %s: %s %s", site, last, s.Recovery.Message)
		}
		switch s.Recovery.Phase {
		case v1alpha1.RecoveryRejoined:
			if s.State != v1alpha1.StateReadOnly || !s.Replicating || s.DivergentGtid != "" {
				return fmt.Errorf("rejoined, but %s replicating %v divergent %q", s.State, s.Replicating, s.DivergentGtid)
			}
			return nil
		case v1alpha1.RecoveryFailed:
			return fmt.Errorf("%w: failed in %s: %s %s", errStopWaiting, s.Recovery.FailedPhase, s.Recovery.Reason, s.Recovery.Message)
		}
		return fmt.Errorf("phase %s", s.Recovery.Phase)
	})
	if err != nil {
		return err
	}
	rec := siteStatus(mg, site).Recovery
	if rec.PreservedAt == "" {
		r.Failf("%s rejoined without saying where its earlier data is", site)
	}
	r.Notef("%s rejoined; earlier data preserved at %s", site, rec.PreservedAt)
	return nil
}

// compareSites: once site has caught up with the primary, both hold the
// same rows, and site none of the acknowledged writes the failover lost.
func (g *Group) compareSites(ctx context.Context, r *Result, site, primary string, lost []int64) {
	acct, err := g.Account(ctx)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	admin, err := g.admin(ctx)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	addrs := g.SiteAddrs()
	sum := func(s string) (string, error) {
		var parts []string
		for _, t := range []string{load.LoadTable, load.ProbeTable} {
			q := fmt.Sprintf("SELECT COUNT(*) * 1000003 + COALESCE(SUM(id), 0) %% 1000003 FROM `%s`.`%s`", acct.Database, t)
			n, err := admin.QueryInt(ctx, addrs[s], q)
			if err != nil {
				return "", err
			}
			parts = append(parts, fmt.Sprint(n))
		}
		return strings.Join(parts, "/"), nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		x, errA := sum(site)
		y, errB := sum(primary)
		if errA == nil && errB == nil && x == y {
			r.Notef("%s and %s hold the same rows (%s)", site, primary, x)
			break
		}
		if time.Now().After(deadline) {
			r.Broken++
			r.Failf("%s's rows (%s, %v) differ from %s's (%s, %v) a minute after the load stopped", site, x, errA, primary, y, errB)
			return
		}
		time.Sleep(time.Second)
	}
	if len(lost) == 0 {
		return
	}
	ids := make([]string, len(lost))
	for i, id := range lost {
		ids[i] = fmt.Sprint(id)
	}
	in := strings.Join(ids, ",")
	n, err := admin.QueryInt(ctx, addrs[site], fmt.Sprintf("SELECT (SELECT COUNT(*) FROM `%s`.`%s` WHERE id IN (%s)) + "+
		"(SELECT COUNT(*) FROM `%s`.`%s` WHERE id IN (%s))", acct.Database, load.LoadTable, in, acct.Database, load.ProbeTable, in))
	switch {
	case err != nil:
		r.Failf("read %s's errant rows: %v", site, err)
	case n > 0:
		r.Broken++
		r.Failf("%s still holds %d of the %d writes the failover discarded", site, n, len(lost))
	default:
		r.Notef("%s holds none of the %d writes the failover discarded", site, len(lost))
	}
}

// forgedReclone posts a reclone of site to its sidecar as an attacker
// would: without a certificate, and with one naming the operator but
// issued by the attacker's own CA. Both must be refused (401), counted in
// the sidecar's refusal counter, and start nothing.
func (g *Group) forgedReclone(ctx context.Context, r *Result, site string) {
	pod, err := g.sitePodObject(ctx, site)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	before, err := g.e.scrape(ctx, pod, reclone.MetricRefusals)
	if err != nil || !before.Found {
		r.Failf("%s's sidecar does not export %s: %v", site, reclone.MetricRefusals, err)
		return
	}
	ca, err := pki.NewCA("attacker", time.Now(), pki.CAValidity)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	is, err := ca.Issue(pki.Request{Identity: pki.OperatorIdentity()}, time.Now())
	if err != nil {
		r.Failf("%v", err)
		return
	}
	forged, err := is.TLS()
	if err != nil {
		r.Failf("%v", err)
		return
	}
	mg, err := g.Get(ctx)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	body, _ := json.Marshal(reclone.Request{ID: "forged", Phase: v1alpha1.RecoveryRequested,
		Generation: mg.Status.TopologyGeneration, Accepted: time.Now()})
	u := "https://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(routing.SidecarPort)) + reclone.PathReclone
	for name, certs := range map[string][]tls.Certificate{"no certificate": nil, "the attacker's operator certificate": {forged}} {
		tr := &http.Transport{DialContext: g.e.C.Dial, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: certs}} //nolint:gosec // an attacker checks nothing
		c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		resp, err := c.Post(u, "application/json", bytes.NewReader(body))
		if err != nil {
			r.Failf("forged reclone with %s: %v", name, err)
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			r.Broken++
			r.Failf("forged reclone of %s with %s answered %d, want 401", site, name, resp.StatusCode)
		}
	}
	after, err := g.e.scrape(ctx, pod, reclone.MetricRefusals)
	switch {
	case err != nil:
		r.Failf("%v", err)
	case after.Sum-before.Sum < 2:
		r.Failf("two forged reclones, but %s counted %g refusals", site, after.Sum-before.Sum)
	default:
		r.Notef("two forged reclones of %s refused (401) and counted", site)
	}
}
