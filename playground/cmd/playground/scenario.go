package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/shipstream/bloodraven/playground/scenario"
)

const scenarioUsage = `usage: playground scenario [-list] NAME|NUMBER... | all

Starts a fresh local cluster, installs the operator from its chart, runs the
scenarios one after another (each with its own group), prints what each found,
and takes the cluster down. Histories are saved under
$BLOODRAVEN_PLAYGROUND_HISTORY (default $TMPDIR/bloodraven-scenarios).
`

// scenarioCmd runs chaos scenarios of playground/scenario.
func scenarioCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, scenarioUsage) }
	list := fs.Bool("list", false, "list the scenarios")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, s := range scenario.All() {
			fmt.Printf("%2d %-30s %s\n", s.Number, s.Name, s.Title)
		}
		return nil
	}
	picked, err := pickScenarios(fs.Args())
	if err != nil {
		fs.Usage()
		return err
	}
	env, err := scenario.Start(ctx, scenario.Options{Log: os.Stdout})
	if err != nil {
		return err
	}
	var failed []string
	for _, s := range picked {
		r := env.Run(ctx, s)
		fmt.Print(r.String())
		if !r.Passed() {
			failed = append(failed, s.Name)
		}
	}
	if err := env.Close(); err != nil {
		return fmt.Errorf("cluster down: %w", err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("scenarios failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

func pickScenarios(names []string) ([]scenario.Scenario, error) {
	if len(names) == 0 {
		return nil, errors.New("name a scenario, or all")
	}
	if len(names) == 1 && names[0] == "all" {
		return scenario.All(), nil
	}
	var out []scenario.Scenario
	for _, n := range names {
		s, ok := scenario.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("no scenario %q (playground scenario -list)", n)
		}
		out = append(out, s)
	}
	return out, nil
}
