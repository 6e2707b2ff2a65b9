package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestScripts runs the replayable scripts in testdata/scripts: each builds
// a world, fires faults by hand, steps it and prints what happened, and the
// output is compared with the golden text under each command. Regenerate
// the golden text with: go test ./internal/sim -run TestScripts -rewrite
//
// Commands (see docs/simulation.md):
//
//	world [sites=N] [seed=N] [roles=(pc,pc,dr)] [poll=1s] [threshold=N]
//	      [recovery=N] [lease=6s] [peer-check=2s] [cooldown=30s] [drain=10s]
//	      [writes=0.9] [replicas=N] [operator=real] [flavor=mysql|mariadb]
//	fault <kind> [site=NAME|primary|operator] [peer=...] [dur=N] [delay=N] [by=N]
//	step [N]          runs N steps (default 1), prints the trace they made
//	print status      the operator's persisted state
//	print sites       each site's mysqld, sidecar view and lease
//	check             the invariant violations so far, or "no violation"
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		var sc script
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := sc.run(td)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			return out
		})
	})
}

// script is one script's world and how much of its trace was printed.
type script struct {
	w       *World
	printed int
}

func (sc *script) run(td *datadriven.TestData) (string, error) {
	if td.Cmd != "world" && sc.w == nil {
		return "", fmt.Errorf("%s before world", td.Cmd)
	}
	switch td.Cmd {
	case "world":
		return sc.world(td)
	case "fault":
		return sc.fault(td)
	case "step":
		return sc.step(td)
	case "print":
		return sc.print(td)
	case "check":
		return sc.violations(), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

// world builds the world: the real operator, sidecar and failover code.
// operator=real, from when the simulation also had a model operator, is
// still accepted and changes nothing.
func (sc *script) world(td *datadriven.TestData) (string, error) {
	cfg := Config{Seed: 1, Steps: 1 << 30, Roles: []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate},
		PollInterval: time.Second, FailureThreshold: 2, RecoveryThreshold: 1, LeaseTimeout: 6 * time.Second,
		PeerCheckInterval: 2 * time.Second, Cooldown: 30 * time.Second, MaxLagWait: 20 * time.Second,
		DrainTimeout: 10 * time.Second, WriteChance: 1, Schedule: Schedule{}}
	mariadb := false
	for _, a := range td.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		var err error
		switch a.Key {
		case "sites":
			var n int
			if _, err = fmt.Sscan(v, &n); err == nil {
				cfg.Roles = slices.Repeat([]v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate}, n)
			}
		case "roles":
			cfg.Roles, err = parseRoles(a.Vals)
		case "seed":
			_, err = fmt.Sscan(v, &cfg.Seed)
		case "poll":
			cfg.PollInterval, err = time.ParseDuration(v)
		case "lease":
			cfg.LeaseTimeout, err = time.ParseDuration(v)
		case "peer-check":
			cfg.PeerCheckInterval, err = time.ParseDuration(v)
		case "cooldown":
			cfg.Cooldown, err = time.ParseDuration(v)
		case "drain":
			cfg.DrainTimeout, err = time.ParseDuration(v)
		case "threshold":
			_, err = fmt.Sscan(v, &cfg.FailureThreshold)
		case "recovery":
			_, err = fmt.Sscan(v, &cfg.RecoveryThreshold)
		case "writes":
			_, err = fmt.Sscan(v, &cfg.WriteChance)
		case "replicas":
			_, err = fmt.Sscan(v, &cfg.OperatorReplicas)
		case "flavor":
			mariadb = v == "mariadb"
			if v != "mariadb" && v != "mysql" {
				err = fmt.Errorf("flavor=%q: want mysql or mariadb", v)
			}
		case "operator":
			if v != "real" {
				err = fmt.Errorf("operator=%q: the simulation runs the real operator only", v)
			}
		default:
			err = fmt.Errorf("unknown argument %q", a.Key)
		}
		if err != nil {
			return "", fmt.Errorf("world %s: %w", a.Key, err)
		}
	}
	if err := cfg.validate(); err != nil {
		return "", err
	}
	cfg.OperatorReplicas, cfg.MariaDB = max(1, cfg.OperatorReplicas), mariadb
	cfg = cfg.withDefaults()
	sc.w, sc.printed = newWorld(cfg, cfg.Schedule), 0
	sc.w.stats.SidecarFences, sc.w.stats.Faults = map[string]int{}, map[FaultKind]int{}
	names := make([]string, len(cfg.Roles))
	for i, r := range cfg.Roles {
		names[i] = siteNames[i] + "(" + string(r) + ")"
	}
	code := "real operator loop, sidecar and failover code"
	if mariadb {
		code += "; MariaDB"
	}
	return fmt.Sprintf("sites %s; poll %s, threshold %d, lease %s, peer-check %s, cooldown %s; %s",
		strings.Join(names, " "), cfg.PollInterval, cfg.FailureThreshold, cfg.LeaseTimeout, cfg.PeerCheckInterval,
		cfg.Cooldown, code), nil
}

func parseRoles(vals []string) ([]v1alpha1.SiteRole, error) {
	short := map[string]v1alpha1.SiteRole{"pc": v1alpha1.RolePrimaryCandidate, "dr": v1alpha1.RoleDROnly,
		"ro": v1alpha1.RoleReadOnly}
	out := make([]v1alpha1.SiteRole, 0, len(vals))
	for _, v := range vals {
		r, ok := short[strings.TrimSpace(v)]
		if !ok {
			return nil, fmt.Errorf("role %q: want pc, dr or ro", v)
		}
		out = append(out, r)
	}
	return out, nil
}

// fault fires a fault now: the schedule language of ParseSchedule, with
// sites also named (iad, pdx, ...) and no at=.
func (sc *script) fault(td *datadriven.TestData) (string, error) {
	fields := []string{}
	for _, a := range td.CmdArgs {
		if a.Key == "at" {
			return "", fmt.Errorf("fault: no at= in scripts, faults fire when given")
		}
		if len(a.Vals) == 0 {
			fields = append(fields, a.Key)
			continue
		}
		v := a.Vals[0]
		if s, ok := sc.w.siteByName(v); ok {
			v = fmt.Sprint(s.idx)
		}
		fields = append(fields, a.Key+"="+v)
	}
	f, err := parseFault(strings.Join(fields, " "))
	if err != nil {
		return "", fmt.Errorf("fault: %w", err)
	}
	f = f.normalized()
	f.At = sc.w.step
	w := sc.w
	w.sched = append(w.sched[:w.next:w.next], append(Schedule{f}, w.sched[w.next:]...)...)
	return "", nil
}

// step runs N steps and prints the trace lines they added.
func (sc *script) step(td *datadriven.TestData) (string, error) {
	n := 1
	if len(td.CmdArgs) > 0 {
		if _, err := fmt.Sscan(td.CmdArgs[0].Key, &n); err != nil || n < 1 {
			return "", fmt.Errorf("step %q: want a positive count", td.CmdArgs[0].Key)
		}
	}
	for range n {
		sc.w.runStep()
	}
	return sc.newTrace(), nil
}

func (sc *script) newTrace() string {
	lines := sc.w.trace[sc.printed:]
	sc.printed = len(sc.w.trace)
	return strings.Join(lines, "\n")
}

func (sc *script) print(td *datadriven.TestData) (string, error) {
	what := ""
	if len(td.CmdArgs) > 0 {
		what = td.CmdArgs[0].Key
	}
	switch what {
	case "status":
		return sc.status(), nil
	case "sites":
		return sc.sites(), nil
	}
	return "", fmt.Errorf("print %q: want status or sites", what)
}

// status prints the operator's persisted state.
func (sc *script) status() string {
	st := sc.w.op.persisted()
	var b strings.Builder
	fmt.Fprintf(&b, "t=%04d active %s generation %d", sc.w.step, st.ActiveSite, st.Generation)
	if !sc.w.op.running() {
		b.WriteString(" (operator down)")
	}
	if in := st.Intent; in != nil {
		fmt.Fprintf(&b, "\nfailover %s -> %s at step %s (generation %d)", in.From, in.To, in.Step, in.Generation)
	}
	for _, h := range st.History {
		fmt.Fprintf(&b, "\nhistory %s %s -> %s", h.Kind, h.From, h.To)
	}
	for _, r := range st.Sites {
		var marks []string
		if r.MayBeWritable {
			marks = append(marks, "maybe-writable")
		}
		if !r.Divergent.IsEmpty() {
			marks = append(marks, "divergent "+r.Divergent.String())
		}
		if r.AdminFenced {
			marks = append(marks, "admin-fenced")
		}
		if len(marks) > 0 {
			fmt.Fprintf(&b, "\nsite %s: %s", r.Name, strings.Join(marks, ", "))
		}
	}
	return b.String()
}

// sites prints each site's mysqld and sidecar as they are.
func (sc *script) sites() string {
	w := sc.w
	lines := make([]string, 0, len(w.sites))
	for _, s := range w.sites {
		db := "down"
		switch {
		case !s.pod:
			db = "pod gone"
		case s.db.up && s.db.readOnly:
			db = "read-only"
		case s.db.up:
			db = "writable"
		}
		line := fmt.Sprintf("%s: mysqld %s, executed %s", s.name, db, s.db.executed)
		if w.cfg.MariaDB {
			line += fmt.Sprintf(" (gtid_binlog_state %q, gtid_slave_pos %q)", w.binlogState(s.db.executed), posString(s.db.maria.slave))
		}
		if s.pod && s.sidecar != nil {
			if v, ok := s.sidecar.view(); ok {
				line += fmt.Sprintf("; sidecar holds %s@%d", v.ActiveSite, v.Generation)
			} else {
				line += "; sidecar holds no view"
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func (sc *script) violations() string {
	vs := sc.w.check.violations
	if len(vs) == 0 {
		return "no violation"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return strings.Join(out, "\n")
}
