package plugin

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Status prints a group's status: the active site, generations, conditions,
// one row per site, the last failover and the latest planned failover.
func Status(ctx context.Context, c client.Client, ns, name string, w io.Writer) error {
	g, err := getGroup(ctx, c, ns, name)
	if err != nil {
		return err
	}
	return wrapWrite(WriteStatus(w, g))
}

// WriteStatus prints g as Status does.
func WriteStatus(w io.Writer, g *v1alpha1.MysqlFailoverGroup) error {
	st := &g.Status
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Group:\t%s/%s\n", g.Namespace, g.Name)
	fmt.Fprintf(tw, "Active site:\t%s\n", orDash(st.ActiveSite))
	fmt.Fprintf(tw, "Topology generation:\t%d\n", st.TopologyGeneration)
	fmt.Fprintf(tw, "Observed generation:\t%d (spec generation %d)\n", st.ObservedGeneration, g.Generation)
	fmt.Fprintf(tw, "Fenced by an administrator:\t%s\n", orDash(g.Annotations[v1alpha1.FencedSitesAnnotation]))
	if f := st.PrimaryFailingSince; f != nil {
		fmt.Fprintf(tw, "Primary failing since:\t%s\n", when(f.Time))
	}
	if v, ok := g.Annotations[v1alpha1.PlannedFailoverAnnotation]; ok {
		fmt.Fprintf(tw, "Planned failover requested:\t%s\n", v)
	}
	fmt.Fprintln(tw)
	writeConditions(tw, g)
	fmt.Fprintln(tw)
	writeSites(tw, g)
	fmt.Fprintln(tw)
	writeFailovers(tw, st)
	return tw.Flush()
}

func writeConditions(w io.Writer, g *v1alpha1.MysqlFailoverGroup) {
	fmt.Fprintln(w, "CONDITION\tSTATUS\tREASON\tSINCE\tMESSAGE")
	if len(g.Status.Conditions) == 0 {
		fmt.Fprintln(w, "-\t-\t-\t-\tnone reported yet")
	}
	for _, c := range g.Status.Conditions {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, when(c.LastTransitionTime.Time), c.Message)
	}
}

func writeSites(w io.Writer, g *v1alpha1.MysqlFailoverGroup) {
	admin := map[string]bool{}
	for e := range strings.SplitSeq(g.Annotations[v1alpha1.FencedSitesAnnotation], ",") {
		admin[e] = true
	}
	recs := map[string]v1alpha1.SiteStatus{}
	for _, s := range g.Status.Sites {
		recs[s.Name] = s
	}
	fmt.Fprintln(w, "SITE\tROLE\tACTIVE\tSTATE\tFENCED\tADMIN-FENCED\tREPLICATING\tLAG\tGTID EXECUTED\tNOTE")
	for _, s := range g.Spec.Sites {
		r := recs[s.Name]
		role := string(s.Role)
		if role == "" {
			role = string(v1alpha1.RolePrimaryCandidate)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, role, yes(s.Name == g.Status.ActiveSite),
			orDash(string(r.State)), yes(r.Fenced), yes(admin[s.Name]), yes(r.Replicating), lag(r.SecondsBehindSource),
			orDash(r.GtidExecuted), siteNote(r))
	}
}

func siteNote(r v1alpha1.SiteStatus) string {
	var notes []string
	if r.ReplicationError != "" {
		notes = append(notes, "replication error: "+r.ReplicationError)
	}
	if r.DivergentGtid != "" {
		notes = append(notes, "diverged: "+r.DivergentGtid)
	}
	return strings.Join(notes, "; ")
}

func writeFailovers(w io.Writer, st *v1alpha1.MysqlFailoverGroupStatus) {
	if f := st.Failover; f != nil {
		fmt.Fprintf(w, "Failover in flight:\t%s -> %s, generation %d, step %s, since %s\n",
			f.From, f.To, f.Generation, f.Step, when(f.StartTime.Time))
	}
	if lf := st.LastFailover; lf != nil {
		fmt.Fprintf(w, "Last failover:\t%s %s -> %s at %s, transactions lost: %s\n",
			lf.Kind, lf.From, lf.To, when(lf.Time.Time), lossText(lf))
	} else {
		fmt.Fprintln(w, "Last failover:\tnone")
	}
	for i := range st.FailoverHistory {
		if h := &st.FailoverHistory[i]; h.LossLowerBound {
			fmt.Fprintf(w, "Earlier failover:\t%s %s -> %s at %s, transactions lost: %s\n",
				h.Kind, h.From, h.To, when(h.Time.Time), lossText(h))
		}
	}
	writePlanned(w, st.PlannedFailover)
}

// lossText renders a failover's transactionsLost: a count only when it is
// final, else what it is known to be at least and why.
func lossText(r *v1alpha1.FailoverRecord) string {
	switch {
	case r.TransactionsLost == nil:
		return "not known yet (the old primary is still to be read)"
	case r.LossLowerBound:
		return fmt.Sprintf("at least %d (a later failover came before it could be read in full)", *r.TransactionsLost)
	case r.LossPending():
		var unread []string
		if r.SourceLossPending {
			unread = append(unread, r.From)
		}
		unread = append(unread, r.AbandonedLossPending...)
		return fmt.Sprintf("at least %d (pending: %s still to be read)", *r.TransactionsLost, strings.Join(unread, ", "))
	}
	return strconv.FormatInt(*r.TransactionsLost, 10)
}

func writePlanned(w io.Writer, b *v1alpha1.PlannedFailoverStatus) {
	if b == nil {
		fmt.Fprintln(w, "Planned failover:\tnone")
		return
	}
	fmt.Fprintf(w, "Planned failover:\t%s\n", b.Phase)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %s:\t%s\n", k, v)
		}
	}
	row("request", b.Request)
	row("target", b.Target)
	row("source", b.SourcePrimary)
	if b.StartTime != nil {
		row("started", when(b.StartTime.Time))
	}
	if b.CompletionTime != nil {
		row("completed", fmt.Sprintf("%s (%ds)", when(b.CompletionTime.Time), b.DurationSeconds))
	}
	if b.MaxLagWait != nil {
		row("maxLagWait", b.MaxLagWait.Duration.String())
	}
	if b.TransactionsLost != nil {
		row("transactions lost", strconv.FormatInt(*b.TransactionsLost, 10))
	}
	row("reason", b.Reason)
	row("message", b.Message)
	if b.RetryAfter != nil {
		row("retry after", when(b.RetryAfter.Time))
	}
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func lag(s *int64) string {
	if s == nil {
		return "-"
	}
	return strconv.FormatInt(*s, 10) + "s"
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
