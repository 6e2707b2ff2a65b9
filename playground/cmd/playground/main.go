package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

const usage = `usage: playground [--state DIR] COMMAND [ARGS]

  demo [--sites iad,pdx] [--namespace NS] [--group NAME] [--no-writer] [-v]
                      make playground: start a cluster in the background, install
                      Bloodraven with its Helm chart, create a failover group on
                      MariaDB, wait until healthy, start a writer, print what to try
  up [-d] [--sites a,b] [--image NAME=PROGRAM]... [--no-dns] [-v]
                      start a cluster; without -d it runs until Ctrl-C
  down [-purge]       stop the writer and the cluster and remove everything they
                      made; -purge also removes the state folder
  writer [--namespace NS] [--group NAME]
                      write rows through the group's DNS name (demo starts it)
  status              show addresses, sites, partitions and stopped nodes
  kubeconfig          print the kubeconfig path (export KUBECONFIG=$(playground kubeconfig))
  kill NS/POD [CONTAINER]     SIGKILL a container (it restarts per restartPolicy)
  freeze NS/POD [CONTAINER]   SIGSTOP a container
  thaw NS/POD [CONTAINER]     SIGCONT a frozen container
  node-stop SITE      fail a site's node (processes die, packets drop)
  node-start SITE     bring it back
  partition A B       drop packets between targets: a site, operator, apiserver,
                      clients, dns, pod:NS/NAME, label:NS/SELECTOR, ip:CIDR
  heal [A B]          remove one partition, or all
  exec CMD [ARGS]     run a command in the cluster's network namespace
  scenario [-list] NAME...|all   run chaos scenarios on a fresh cluster

The state folder defaults to $BLOODRAVEN_PLAYGROUND_STATE or /tmp/bloodraven-playground.
`

func main() {
	localcluster.Init()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	state := fs.String("state", defaultState(), "state folder")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no command")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "up" {
		return up(ctx, *state, rest)
	}
	if cmd == "scenario" {
		return scenarioCmd(ctx, rest)
	}
	switch cmd {
	case "demo":
		return demo(ctx, *state, rest)
	case "writer":
		return writerCmd(ctx, *state, rest)
	case "down":
		return down(*state, rest)
	}
	c, err := localcluster.Attach(*state)
	if err != nil {
		return err
	}
	return command(ctx, c, cmd, rest)
}

func defaultState() string {
	if s := os.Getenv("BLOODRAVEN_PLAYGROUND_STATE"); s != "" {
		return s
	}
	return "/tmp/bloodraven-playground"
}

func command(ctx context.Context, c *localcluster.Cluster, cmd string, args []string) error {
	switch cmd {
	case "status":
		return status(ctx, c)
	case "kubeconfig":
		fmt.Println(c.Kubeconfig())
		return nil
	case "kill", "freeze", "thaw":
		return signalCmd(ctx, c, cmd, args)
	case "node-stop", "node-start":
		if len(args) != 1 {
			return fmt.Errorf("%s SITE", cmd)
		}
		if cmd == "node-stop" {
			return c.StopNode(ctx, args[0])
		}
		return c.StartNode(ctx, args[0])
	case "partition":
		if len(args) != 2 {
			return errors.New("partition A B")
		}
		return c.Partition(ctx, args[0], args[1])
	case "heal":
		return heal(ctx, c, args)
	case "exec":
		out, err := c.Exec(ctx, args...)
		if _, werr := os.Stdout.Write(out); werr != nil && err == nil {
			err = werr
		}
		return err
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func signalCmd(ctx context.Context, c *localcluster.Cluster, cmd string, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("%s NS/POD [CONTAINER]", cmd)
	}
	ns, pod, ok := strings.Cut(args[0], "/")
	if !ok {
		return fmt.Errorf("%s: want NAMESPACE/POD, got %q", cmd, args[0])
	}
	container := ""
	if len(args) == 2 {
		container = args[1]
	}
	fn := map[string]func(context.Context, string, string, string) error{"kill": c.Kill, "freeze": c.Freeze, "thaw": c.Thaw}[cmd]
	return fn(ctx, ns, pod, container)
}

func heal(ctx context.Context, c *localcluster.Cluster, args []string) error {
	switch len(args) {
	case 0:
		return c.HealAll(ctx)
	case 2:
		return c.Heal(ctx, args[0], args[1])
	}
	return errors.New("heal [A B]")
}

func status(ctx context.Context, c *localcluster.Cluster) error {
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("kubeconfig:  %s\napi server:  %s\nnetns:       %s\nsupervisor:  pid %d\n",
		st.Info.Kubeconfig, st.Info.Server, st.Info.NetNS, st.Info.SupervisorPID)
	fmt.Printf("dns:         BIND %s (zone %s), cluster DNS %s\n", st.Info.DNSServer, st.Info.Zone, st.Info.ClusterDNS)
	sites := make([]string, 0, len(st.Info.Sites))
	for site := range st.Info.Sites {
		sites = append(sites, site)
	}
	sort.Strings(sites)
	for _, site := range sites {
		fmt.Printf("site:        %s pods %s\n", site, st.Info.Sites[site])
	}
	for _, p := range st.Partitions {
		fmt.Printf("partition:   %s <-/-> %s\n", p.A, p.B)
	}
	for _, s := range st.Stopped {
		fmt.Printf("stopped:     %s\n", s)
	}
	if pid, ok := runningWriter(c.StateDir); ok {
		fmt.Printf("writer:      pid %d, log %s\n", pid, writerLog(c.StateDir))
	}
	return nil
}

func up(ctx context.Context, state string, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	detach := fs.Bool("d", false, "return once ready and leave the cluster running")
	sites := fs.String("sites", "site-a,site-b", "comma-separated site names")
	noDNS := fs.Bool("no-dns", false, "skip BIND and external-dns")
	verbose := fs.Bool("v", false, "debug log in STATE/supervisor.log")
	images := localcluster.Images{}
	fs.Func("image", "NAME=PROGRAM maps an image to a local program (repeatable)", func(v string) error {
		name, prog, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("want NAME=PROGRAM, got %q", v)
		}
		images[name] = localcluster.Image{Entrypoint: strings.Fields(prog)}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := localcluster.Options{
		StateDir: state, Sites: strings.Split(*sites, ","), Images: images, NoDNS: *noDNS,
		Detach: *detach, Verbose: *verbose, Progress: os.Stdout,
	}
	c, err := localcluster.Up(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig())
	if *detach {
		return nil
	}
	fmt.Println("running; Ctrl-C stops it")
	select {
	case <-ctx.Done():
	case <-c.Done():
		fmt.Println("the cluster went down")
	}
	start := time.Now()
	err = c.Down()
	fmt.Printf("down in %.1fs\n", time.Since(start).Seconds())
	return err
}
