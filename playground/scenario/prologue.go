package scenario

import (
	"context"
	"fmt"
	"time"
)

// warmUp is how long the load runs before a scenario breaks anything.
const warmUp = 3 * time.Second

// Plan is the group a scenario plays on and how its load reaches it.
type Plan struct {
	// Timings of the group; zero means TestTimings.
	Timings Timings
	// SpecDefaults leaves every timing at the spec's default instead.
	SpecDefaults bool
	// Extra is appended to the group's spec.
	Extra string
	// SemiSync is the group's semi-sync mode (install.SemiSyncModes); empty
	// is off, the spec's default.
	SemiSync string
	// Sites of the group, the first active; nil means Sites.
	Sites []string
	Load  LoadOptions
}

func (p Plan) timings() Timings {
	switch {
	case p.SpecDefaults:
		return Timings{}
	case p.Timings == (Timings{}):
		return TestTimings
	}
	return p.Timings
}

// Body is a scenario's own part, run on a settled group under load. It
// records what it finds in r; an error ends it as a failure.
type Body func(ctx context.Context, g *Group, l *Load, r *Result) error

// play is what every scenario shares around its body: a fresh group under
// load (setup), then, whatever happened, every partition healed, the load
// stopped and the group deleted.
func play(ctx context.Context, e *Env, name string, p Plan, body Body) Result {
	r := Result{Name: name}
	g, l, err := setup(ctx, e, name, p)
	defer func() { teardown(e, g, l) }()
	defer func() { _ = e.C.HealAll(context.Background()) }()
	if err != nil {
		return r.fail(err)
	}
	if err := body(ctx, g, l, &r); err != nil {
		return r.fail(err)
	}
	return r
}

// setup makes a group in a fresh namespace and starts the load on it.
func setup(ctx context.Context, e *Env, name string, p Plan) (*Group, *Load, error) {
	g, err := e.NewGroup(ctx, name, p.Sites, p.timings(), p.SemiSync, p.Extra)
	if err != nil {
		return nil, nil, err
	}
	l, err := g.StartLoad(ctx, p.Load)
	if err != nil {
		return g, nil, err
	}
	if _, err := l.WaitAck(ctx, g.Sites[0], false, l.Started, 20*time.Second); err != nil {
		return g, l, fmt.Errorf("load does not get through: %w", err)
	}
	return g, l, sleepCtx(ctx, warmUp)
}

// teardown stops a load that was not stopped and deletes the group.
func teardown(e *Env, g *Group, l *Load) {
	if l != nil {
		l.cancel()
		l.wg.Wait()
	}
	if g != nil {
		if err := g.Delete(context.Background()); err != nil {
			e.Logf("delete %s: %v", g.NS, err)
		}
	}
}
