package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func init() {
	register(Scenario{25, "in-place-upgrade", "the operator ships a new sidecar binary: every sidecar swaps it in place under load; " +
		"the hash changes, Pod restart counts and mysqld's uptime do not, no fence, no failover", inPlaceUpgrade})
}

func inPlaceUpgrade(ctx context.Context, e *Env) Result {
	return play(ctx, e, "in-place-upgrade", Plan{Extra: "  updates: {inPlaceSidecarUpdates: true}\n"}, inPlaceUpgradeBody)
}

// siteBefore is one site before the upgrade.
type siteBefore struct {
	pod      string
	restarts map[string]int32
	uptime   int64
	st       sidecar.StatusReport
}

// inPlaceUpgradeBody: every site reports the shipped hash; the operator is
// switched to ship a variant of bin/sidecar (the same program with bytes
// appended, so another hash); the ordered update streams it to every
// sidecar, which re-executes in place. Then every site reports the new
// hash from a new sidecar process that took its predecessor's state over,
// in the same Pod, no container restarted, mysqld's uptime only grew, no
// sidecar fenced, the group did not fail over and writes flowed.
func inPlaceUpgradeBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	orig := filepath.Join(g.e.Root, "bin", "sidecar")
	shipped, err := exehash.File(orig)
	if err != nil {
		return err
	}
	if err := g.waitHashes(ctx, shipped, time.Minute); err != nil {
		return fmt.Errorf("before the upgrade: %w", err)
	}
	before, err := g.sitesBefore(ctx)
	if err != nil {
		return err
	}
	variant, want, err := sidecarVariant(orig)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(variant) }()
	start := l.Mark("operator-ships-variant")
	if err := g.e.shipSidecar(ctx, variant, l); err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := g.e.shipSidecar(rctx, orig, nil); err != nil {
			g.e.Logf("restoring the operator's sidecar binary: %v", err)
		}
	}()
	if err := g.waitHashes(ctx, want, 3*time.Minute); err != nil {
		return fmt.Errorf("after the upgrade: %w", err)
	}
	done := l.Mark("every-site-upgraded")
	r.Figure("in-place-upgrade-seconds", done.Sub(start).Seconds())
	// Past one more lease: a sidecar that lost its lease in the swap fences now.
	if err := sleepCtx(ctx, g.T.LeaseTimeout+g.T.PeerCheckInterval); err != nil {
		return err
	}
	g.judgeInPlace(ctx, r, before, want)
	noFailover(ctx, g, r)
	end := l.Mark("end")
	rep := r.finish(ctx, l, 0)
	if n, p := refusedOn(&l.hist, g.Sites[0], start, end); n > 0 {
		r.Failf("%s refused %d probes during the upgrade, first %s", g.Sites[0], n, p.Err)
	}
	r.Figure("window-s", rep.MaxWindow.Seconds())
	if rep.MaxWindow > time.Second {
		r.Failf("writes unavailable for %s during the upgrade", rep.MaxWindow)
	}
	return nil
}

// sidecarVariant writes bin/sidecar with a marker appended (still the same
// program: the loader ignores what follows the ELF's segments) and returns
// its path and hash.
func sidecarVariant(orig string) (string, string, error) {
	b, err := os.ReadFile(orig)
	if err != nil {
		return "", "", err
	}
	b = append(b, []byte(fmt.Sprintf("\nbloodraven in-place-upgrade scenario %d\n", time.Now().UnixNano()))...)
	p := orig + "-inplace"
	if err := os.WriteFile(p, b, 0o755); err != nil {
		return "", "", err
	}
	h, err := exehash.File(p)
	return p, h, err
}

// waitHashes waits until status.sites[].sidecarExecutableHash is want for
// every site, and status.operatorExecutableHash is set.
func (g *Group) waitHashes(ctx context.Context, want string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		mg, err := g.Get(ctx)
		var bad []string
		if err == nil {
			if mg.Status.OperatorExecutableHash == "" {
				bad = append(bad, "operator (no hash)")
			}
			for _, s := range mg.Status.Sites {
				if s.SidecarExecutableHash != want {
					bad = append(bad, fmt.Sprintf("%s (%.12s)", s.Name, s.SidecarExecutableHash))
				}
			}
			if len(mg.Status.Sites) == 0 {
				bad = append(bad, "no sites")
			}
		}
		if err == nil && len(bad) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sidecar hashes not %.12s within %s: %s (%v); status: %s", want, within,
				strings.Join(bad, ", "), err, g.statusNote(ctx))
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// sitesBefore reads each site's Pod, restart counts, mysqld uptime and sidecar status.
func (g *Group) sitesBefore(ctx context.Context) (map[string]siteBefore, error) {
	admin, err := g.admin(ctx)
	if err != nil {
		return nil, err
	}
	sts, err := g.sidecarStatuses(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]siteBefore{}
	for _, s := range g.Sites {
		pod, err := g.sitePodObject(ctx, s)
		if err != nil {
			return nil, err
		}
		b := siteBefore{pod: pod.Name, restarts: map[string]int32{}, st: sts[s]}
		for _, cs := range pod.Status.ContainerStatuses {
			b.restarts[cs.Name] = cs.RestartCount
		}
		if b.uptime, err = admin.QueryInt(ctx, g.SiteAddrs()[s],
			"SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'"); err != nil {
			return nil, fmt.Errorf("%s uptime: %w", s, err)
		}
		out[s] = b
	}
	return out, nil
}

// judgeInPlace compares every site with what it was before the upgrade.
func (g *Group) judgeInPlace(ctx context.Context, r *Result, before map[string]siteBefore, want string) {
	after, err := g.sitesBefore(ctx)
	if err != nil {
		r.Failf("sites after the upgrade: %v", err)
		return
	}
	for _, s := range g.Sites {
		b, a := before[s], after[s]
		if a.pod != b.pod {
			r.Failf("%s's Pod was replaced: %s, was %s", s, a.pod, b.pod)
		}
		for name, n := range a.restarts {
			if n != b.restarts[name] {
				r.Failf("%s's container %s restarted: restart count %d, was %d", s, name, n, b.restarts[name])
			}
		}
		if a.uptime < b.uptime {
			r.Failf("%s's mysqld restarted: uptime %ds, was %ds", s, a.uptime, b.uptime)
		}
		if a.st.ExecutableHash != want || a.st.Boot == b.st.Boot || !a.st.HandedOver {
			r.Failf("%s's sidecar: hash %.12s, boot %s (was %s), handed over %v: not the new binary re-executed in place",
				s, a.st.ExecutableHash, a.st.Boot, b.st.Boot, a.st.HandedOver)
		}
		if f := a.st.LastFence; f != nil && (b.st.LastFence == nil || !f.At.Equal(b.st.LastFence.At)) {
			r.Failf("%s's sidecar fenced its mysqld at %s: %s", s, f.At.Format("15:04:05.000"), f.Reason)
		}
		r.Notef("%s: mysqld uptime %ds -> %ds, sidecar boot %s -> %s", s, b.uptime, a.uptime, b.st.Boot, a.st.Boot)
	}
}

// shipSidecar points the operator's --sidecar-binary at path (a new
// operator Pod) and waits until a new process leads. l, when set, marks it.
func (e *Env) shipSidecar(ctx context.Context, path string, l *Load) error {
	before, err := e.leaseHolder(ctx)
	if err != nil {
		return err
	}
	deps := e.C.Client.AppsV1().Deployments("bloodraven-system")
	list, err := deps.List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil || len(list.Items) != 1 {
		return fmt.Errorf("operator deployment: %d found, %v", len(list.Items), err)
	}
	d := list.Items[0]
	c := &d.Spec.Template.Spec.Containers[0]
	args := c.Args[:0:0]
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--sidecar-binary=") {
			args = append(args, a)
		}
	}
	c.Args = append(args, "--sidecar-binary="+path)
	if _, err := deps.Update(ctx, &d, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("operator deployment: %w", err)
	}
	if l != nil {
		l.Mark("operator-updated")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if h, err := e.leaseHolder(ctx); err == nil && h != "" && h != before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no new operator leader within 2m after shipping %s (holder %s)", path, before)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}
