package scenario

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Scenario is one named way of breaking a group.
type Scenario struct {
	Number int
	Name   string
	Title  string
	// Run sets up its own group, breaks it, waits and checks.
	Run func(ctx context.Context, e *Env) Result
}

var registry = map[string]Scenario{}

func register(s Scenario) {
	if _, dup := registry[s.Name]; dup {
		panic("scenario registered twice: " + s.Name)
	}
	registry[s.Name] = s
}

// All lists the scenarios in their numbered order.
func All() []Scenario {
	out := make([]Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// Lookup finds a scenario by name or number.
func Lookup(name string) (Scenario, bool) {
	if s, ok := registry[name]; ok {
		return s, true
	}
	for _, s := range registry {
		if fmt.Sprint(s.Number) == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Run runs one scenario with a time limit and fills in its name and duration.
func (e *Env) Run(ctx context.Context, s Scenario) Result {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	e.Logf("scenario %d %s: %s", s.Number, s.Name, s.Title)
	start, boot := time.Now(), len(e.BootstrapFailovers)
	r := s.Run(ctx, e)
	r.Name, r.Duration = s.Name, time.Since(start)
	for _, b := range e.BootstrapFailovers[boot:] {
		r.Notef("a new group failed over while booting and was made again: %s", b)
	}
	return r
}

// namespace names a scenario's namespace, unique within a cluster.
func namespace(s string) string {
	return fmt.Sprintf("%s-%d", s, time.Now().UnixMilli()%100000)
}
