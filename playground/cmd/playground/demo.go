package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

// demoSteps is the number of progress lines demo prints, make's build first.
const demoSteps = 7

// demoOpts are the demo's flags.
type demoOpts struct {
	state     string
	sites     []string
	opsNode   string // the node that runs the operator, outside every site
	namespace string
	group     string
	writer    bool
	verbose   bool
	semiSync  string // off, preferred or required (install.SemiSyncModes)
}

func (o demoOpts) hostname() string { return o.group + ".bloodraven.test" }

// nodes are the cluster's nodes: one per site, then the operator's.
func (o demoOpts) nodes() []string {
	if o.opsNode == "" {
		return o.sites
	}
	return append(append([]string{}, o.sites...), o.opsNode)
}

func parseDemo(state string, args []string) (demoOpts, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	sites := fs.String("sites", "iad,pdx", "comma-separated sites; the first starts as the primary")
	o := demoOpts{state: state}
	fs.StringVar(&o.opsNode, "operator-node", "ops", "a node of its own for the operator, so losing a site does not take the operator with it; empty lets the scheduler pick a site's node")
	fs.StringVar(&o.namespace, "namespace", "default", "namespace of the group")
	fs.StringVar(&o.group, "group", "orders", "name of the group")
	noWriter := fs.Bool("no-writer", false, "start no writer")
	fs.BoolVar(&o.verbose, "v", false, "show the local cluster's start-up steps")
	fs.StringVar(&o.semiSync, "semi-sync", install.SemiSyncOff, "semi-synchronous replication: off (asynchronous), preferred "+
		"(commits wait up to 1 s for a replica, then go on asynchronously) or required (commits wait for a replica)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if _, err := install.SemiSync(o.semiSync); err != nil {
		return o, err
	}
	o.sites, o.writer = strings.Split(*sites, ","), !*noWriter
	if len(o.sites) < 2 {
		return o, errors.New("demo needs at least two sites")
	}
	return o, nil
}

// stepper prints one numbered progress line per step.
type stepper struct{ start time.Time }

func (s stepper) done(n int, format string, args ...any) {
	fmt.Printf("playground: [%d/%d] %s (%.1fs)\n", n, demoSteps, fmt.Sprintf(format, args...), time.Since(s.start).Seconds())
}

// demo brings up the local cluster in the background, installs Bloodraven
// with its Helm chart, creates a failover group, waits until it is healthy,
// starts a writer and prints what to try next. It returns while everything
// keeps running; "down" removes it all. A failed step takes the cluster down.
func demo(ctx context.Context, state string, args []string) error {
	o, err := parseDemo(state, args)
	if err != nil {
		return err
	}
	if pid, ok := localcluster.Running(o.state); ok {
		return fmt.Errorf("a playground already runs from %s (supervisor pid %d): make playground-down first", o.state, pid)
	}
	st := stepper{start: time.Now()}
	root, err := install.RepoRoot()
	if err == nil {
		err = install.CheckBinaries(root)
	}
	if err != nil {
		return err
	}
	st.done(1, "built: bin/operator, bin/sidecar, bin/playground")
	c, err := demoUp(ctx, o, root)
	if err != nil {
		return err
	}
	st.done(2, "local cluster up: nodes %s; KUBECONFIG=%s", strings.Join(o.nodes(), ", "), c.Kubeconfig())
	if err := demoInstall(ctx, c, o, root, st); err != nil {
		fmt.Fprintf(os.Stderr, "playground: %v\nplayground: taking the cluster down; logs stay in %s\n", err, o.state)
		stopWriter(o.state)
		if derr := c.Down(); derr != nil {
			return errors.Join(err, fmt.Errorf("down: %w", derr))
		}
		return err
	}
	return printNext(ctx, c, o, st)
}

func demoUp(ctx context.Context, o demoOpts, root string) (*localcluster.Cluster, error) {
	var progress io.Writer = io.Discard
	if o.verbose {
		progress = os.Stdout
	}
	// The real kubelet's first restart delay (10 s) is longer than failure
	// detection, so a killed mysqld makes a failover, as in production.
	c, err := localcluster.Up(ctx, localcluster.Options{StateDir: o.state, Sites: o.nodes(), RepoRoot: root,
		Detach: true, Progress: progress, BackoffInitial: 10 * time.Second, BackoffMax: 40 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("local cluster: %w", err)
	}
	return c, nil
}

// demoInstall runs steps 3 to 6.
func demoInstall(ctx context.Context, c *localcluster.Cluster, o demoOpts, root string, st stepper) error {
	// The operator ships bin/sidecar: its hash is what sidecars are compared
	// with, and what in-place upgrades send (docs/upgrades.md).
	ch := install.Chart{Root: root, Set: []string{"sidecarBinary=" + filepath.Join(root, "bin", "sidecar"),
		// Sites can be recloned; the built-in mariadb image honours the hold file.
		"reclone.enabled=true", "reclone.mysqldEntrypoint="}}
	helm := "helm install bloodraven charts/bloodraven -n bloodraven-system --create-namespace --set sidecarBinary=$PWD/bin/sidecar"
	if o.opsNode != "" {
		ch.Set = append(ch.Set, `nodeSelector.topology\.kubernetes\.io/zone=`+o.opsNode)
		helm += ` --set 'nodeSelector.topology\.kubernetes\.io/zone=` + o.opsNode + `'`
	}
	if err := install.Install(ctx, c, ch); err != nil {
		return err
	}
	st.done(3, "Bloodraven installed: %s; operator Ready", helm)
	mysqlSpec, err := install.MySQLSpec("mariadb", o.semiSync)
	if err != nil {
		return err
	}
	g := install.Group{Namespace: o.namespace, Name: o.group, Sites: o.sites, Hostname: o.hostname(),
		Spec: mysqlSpec + "  failoverCooldown: 30s\n"}
	if err := install.Create(ctx, c, g); err != nil {
		return fmt.Errorf("create the group: %w", err)
	}
	st.done(4, "failover group %s/%s created: sites %s on MariaDB, semi-sync %s", o.namespace, o.group,
		strings.Join(o.sites, ", "), o.semiSync)
	err = install.Wait(ctx, c, o.namespace, o.group, 4*time.Minute, func(mg *v1alpha1.MysqlFailoverGroup) error {
		if err := install.Healthy(mg, o.sites[0]); err != nil {
			return err
		}
		return install.SemiSyncSettled(mg)
	})
	if err == nil {
		err = install.WaitDNS(ctx, c, o.namespace, o.group, o.sites[0], o.hostname(), time.Minute)
	}
	if err != nil {
		return fmt.Errorf("wait until healthy: %w", err)
	}
	st.done(5, "healthy: %s writable, the others replicating; %s answers %s", o.sites[0], o.hostname(), o.sites[0])
	if !o.writer {
		st.done(6, "no writer (--no-writer)")
		return nil
	}
	pid, err := startWriter(ctx, o)
	if err != nil {
		return err
	}
	st.done(6, "writer running (pid %d), inserting through %s; log %s", pid, o.hostname(), writerLog(o.state))
	return nil
}
