package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

// printNext is the demo's last step: how to reach the cluster and what to
// try on it.
func printNext(ctx context.Context, c *localcluster.Cluster, o demoOpts, st stepper) error {
	self := "bin/playground"
	if exe, err := os.Executable(); err == nil && !strings.HasSuffix(exe, "/bin/playground") {
		self = exe
	}
	if o.state != defaultState() {
		self += " --state " + o.state
	}
	primary, other := o.sites[0], o.sites[1]
	pod := sitePod(ctx, c, o, primary)
	ns := ""
	if o.namespace != "default" {
		ns = " -n " + o.namespace
	}
	st.done(7, "ready; everything keeps running in the background")
	fmt.Printf(`
Use the cluster from this shell (kubectl is the pinned %s):

  export KUBECONFIG=%s
  alias kubectl=%s

`, localcluster.KubeVersion, c.Kubeconfig(), install.Kubectl())
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	rows := [][2]string{
		{"Look around:", ""},
		{"kubectl get mfg" + ns, "the group: active site, Ready, generation"},
		{"kubectl get pods -o wide" + ns, "one Pod per site: mysqld and the sidecar"},
		{self + " exec dig +short @" + c.Info.DNSServer + " " + o.hostname(), "the group's DNS name (external-dns, BIND)"},
		{"tail -f " + writerLog(o.state), "the writer: acknowledged writes every 5 s, and which site answered"},
		{"", ""},
		{"Break it (failovers are at least 30 s apart: spec.failoverCooldown):", ""},
		{"kubectl annotate mfg" + ns + " " + o.group + " " + v1alpha1.PlannedFailoverAnnotation + "=" + other, "a planned failover to " + other},
		{self + " kill " + o.namespace + "/" + pod + " mysqld", "kill the primary's mysqld: an emergency failover"},
		{self + " node-stop " + primary + "   (then node-start " + primary + ")", "lose the primary's whole site"},
		{self + " partition " + primary + " " + other + "   (then heal)", "cut the sites apart"},
		{self + " status", "partitions and stopped nodes"},
		{"", ""},
		{"Scenarios, each on a fresh cluster of its own:", ""},
		{self + " scenario -list", "list them"},
		{self + " scenario primary-killed", "run one (make chaos runs them all)"},
		{"", ""},
		{"make playground-down", "stop everything and remove the state folder " + filepath.Clean(o.state)},
	}
	for _, r := range rows {
		switch {
		case r[0] == "":
			fmt.Fprintln(tw)
		case r[1] == "":
			fmt.Fprintln(tw, r[0])
		default:
			fmt.Fprintf(tw, "  %s\t# %s\n", r[0], r[1])
		}
	}
	return tw.Flush()
}

// sitePod names the site's running Pod, or a placeholder.
func sitePod(ctx context.Context, c *localcluster.Cluster, o demoOpts, site string) string {
	pods, err := c.Client.CoreV1().Pods(o.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: v1alpha1.LabelSite + "=" + site, FieldSelector: "status.phase=Running"})
	if err != nil || len(pods.Items) == 0 {
		return "POD"
	}
	return pods.Items[0].Name
}
