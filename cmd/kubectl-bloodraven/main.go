package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/plugin"
)

const usage = `kubectl bloodraven: MysqlFailoverGroup operations

Usage:
  kubectl bloodraven status <group>
  kubectl bloodraven switchover <group> <site> [--max-lag-wait 30s] [--wait [--timeout 10m]]
  kubectl bloodraven fence <group> <site>
  kubectl bloodraven unfence <group> <site>
  kubectl bloodraven restart-inplace <group> <site>
  kubectl bloodraven reclone <group> <site> [--yes]
  kubectl bloodraven backups <group>
  kubectl bloodraven diverged <group>

Flags of every command:
  -n, --namespace   namespace of the group (default: the context's)
  --kubeconfig      kubeconfig file (default: $KUBECONFIG or ~/.kube/config)
  --context         kubeconfig context (default: the current one)
`

// errUsage marks a command line that does not parse; main exits 2 on it.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, plugin.Connect)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// connectFunc makes the client; tests pass one that reaches envtest.
type connectFunc func(plugin.Config) (client.Client, string, error)

// command is one parsed command line.
type command struct {
	name       string
	args       []string
	cfg        plugin.Config
	maxLagWait time.Duration
	wait       bool
	timeout    time.Duration
	yes        bool
}

// run parses args and runs the command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, connect connectFunc) error {
	return runWith(ctx, args, os.Stdin, stdout, stderr, connect)
}

// runWith is run reading the person's answers from stdin.
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, connect connectFunc) error {
	cmd, err := parse(args, stderr)
	if err != nil {
		return err
	}
	c, ns, err := connect(cmd.cfg)
	if err != nil {
		return err
	}
	g := cmd.args[0]
	switch cmd.name {
	case "status":
		return plugin.Status(ctx, c, ns, g, stdout)
	case "fence":
		return plugin.Fence(ctx, c, ns, g, cmd.args[1], stdout)
	case "unfence":
		return plugin.Unfence(ctx, c, ns, g, cmd.args[1], stdout)
	case "restart-inplace":
		return plugin.RestartInPlace(ctx, c, ns, g, cmd.args[1], stdout)
	case "reclone":
		return plugin.Reclone(ctx, c, ns, g, cmd.args[1], cmd.yes, stdin, stdout)
	case "backups":
		return plugin.Backups(ctx, c, ns, g, stdout)
	case "diverged":
		return plugin.Diverged(ctx, c, ns, g, stdout)
	}
	return switchover(ctx, c, ns, cmd, stdout)
}

func switchover(ctx context.Context, c client.Client, ns string, cmd command, stdout io.Writer) error {
	r, err := plugin.Switchover(ctx, c, ns, cmd.args[0], cmd.args[1], cmd.maxLagWait)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s/%s: planned failover to %s requested (%s)\n", ns, cmd.args[0], cmd.args[1], r.Value)
	if !cmd.wait {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, cmd.timeout)
	defer cancel()
	_, err = plugin.WaitPlanned(wctx, c, r, 500*time.Millisecond, stdout)
	return err
}

// arity is the number of positional arguments of each command.
var arity = map[string]int{"status": 1, "switchover": 2, "fence": 2, "unfence": 2, "restart-inplace": 2, "reclone": 2,
	"backups": 1, "diverged": 1}

// parse reads the command line. Flags may come before, between or after
// the positional arguments, as kubectl allows.
func parse(args []string, stderr io.Writer) (command, error) {
	if len(args) == 0 || arity[args[0]] == 0 {
		fmt.Fprint(stderr, usage)
		return command{}, errUsage
	}
	cmd := command{name: args[0]}
	fs := flag.NewFlagSet("kubectl bloodraven "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&cmd.cfg.Namespace, "n", "", "namespace of the group")
	fs.StringVar(&cmd.cfg.Namespace, "namespace", "", "namespace of the group")
	fs.StringVar(&cmd.cfg.Kubeconfig, "kubeconfig", "", "kubeconfig file")
	fs.StringVar(&cmd.cfg.Context, "context", "", "kubeconfig context")
	if cmd.name == "switchover" {
		fs.DurationVar(&cmd.maxLagWait, "max-lag-wait", 0, "catch-up budget for this request (default: spec.plannedFailover.maxLagWait)")
		fs.BoolVar(&cmd.wait, "wait", false, "follow status.plannedFailover until the request ends")
		fs.DurationVar(&cmd.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	}
	if cmd.name == "reclone" {
		fs.BoolVar(&cmd.yes, "yes", false, "do not ask for confirmation")
	}
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return command{}, errUsage
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		cmd.args = append(cmd.args, rest[0])
		rest = rest[1:]
	}
	if len(cmd.args) != arity[cmd.name] {
		fmt.Fprintf(stderr, "%s takes %d arguments, got %d\n\n%s", cmd.name, arity[cmd.name], len(cmd.args), usage)
		return command{}, errUsage
	}
	if cmd.maxLagWait < 0 || (cmd.wait && cmd.timeout <= 0) {
		fmt.Fprintln(stderr, "--max-lag-wait and --timeout must be positive")
		return command{}, errUsage
	}
	return cmd, nil
}
