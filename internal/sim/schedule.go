package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// FaultKind is what a scheduled fault does.
type FaultKind string

// The faults.
const (
	FaultKillPod      FaultKind = "kill-pod"        // Pod deleted (sidecar and mysqld) for Dur steps, then back
	FaultCrashMySQL   FaultKind = "crash-mysqld"    // mysqld down for Dur steps; the sidecar stays up
	FaultPartition    FaultKind = "partition"       // every link of the site cut for Dur steps
	FaultDropLink     FaultKind = "drop-link"       // the link Site-Peer down for Dur steps
	FaultDelayLink    FaultKind = "delay-link"      // the link Site-Peer delayed Delay steps for Dur steps
	FaultOperatorDown FaultKind = "operator-down"   // the operator down for Dur steps; it restarts with its status only
	FaultSlowReplica  FaultKind = "slow-replica"    // the site's SQL thread stalls for Dur steps
	FaultPlanned      FaultKind = "planned"         // a planned-failover request naming the site
	FaultAdminFence   FaultKind = "admin-fence"     // an administrator fences the site for Dur steps
	FaultReclone      FaultKind = "reclone"         // an administrator reclones a diverged site from the active one
	FaultRestartSide  FaultKind = "restart-sidecar" // the sidecar container alone restarts; mysqld runs on

	// Faults only the real operator's runs draw (realop_faults.go).
	FaultPauseOperator FaultKind = "pause-operator" // the operator process frozen for Dur steps, memory kept
	FaultPauseSite     FaultKind = "pause-site"     // the site's mysqld and sidecar frozen for Dur steps
	FaultLossyReplies  FaultKind = "lossy-replies"  // the operator's calls to the site take effect, their answers are lost, for Dur steps
	FaultSkew          FaultKind = "skew"           // the site's wall clock (its kubelet's Lease) steps By steps off from now on
	FaultLateReport    FaultKind = "late-report"    // a report the site's sidecar sent earlier reaches the operator again, now
	FaultLateView      FaultKind = "late-view"      // the site's sidecar gets an earlier answer of the operator instead of the next one
	FaultOrphanPod     FaultKind = "orphan-pod"     // the site's Pod is force-deleted while its node is cut from the API server for Dur steps
	FaultForgeReport   FaultKind = "forge-report"   // reports naming the site arrive without its certificate, or with another's
	FaultPowerLoss     FaultKind = "power-loss"     // the site's node loses power for Dur steps: its Pod stops, unsynced commits are lost (durability.go)
	FaultPauseMySQL    FaultKind = "pause-mysqld"   // the site's mysqld alone frozen for Dur steps; its sidecar runs on
	FaultFailFence     FaultKind = "fail-fence"     // for Dur steps a fence on the site errs and changes nothing (a sidecar's escalates to stopping mysqld)
	FaultSlowFence     FaultKind = "slow-fence"     // for Dur steps an operator's fence times out and lands Delay steps later (a sidecar's escalates)
	FaultOneWay        FaultKind = "drop-one-way"   // what Site sends to Peer is lost for Dur steps; the other direction works
	FaultPauseSidecar  FaultKind = "pause-sidecar"  // the site's sidecar alone frozen for Dur steps; its mysqld runs on
	// FaultOperatorClock sets the operator's wall clock By steps off from
	// now on; its monotonic clock runs on (realop_clock.go).
	FaultOperatorClock FaultKind = "operator-clock"
	// FaultRestartOperator restarts every operator replica's container in
	// its Pod, down for Dur steps: memory lost, status kept, and the Pod's
	// name, its Lease identity, kept, so the leader's container takes its
	// Lease back at once (realop_restart.go).
	FaultRestartOperator FaultKind = "restart-operator"
	// FaultTwoOperators is not scheduled: it counts the runs with two
	// operator replicas, a leader and a standby (Config.OperatorReplicas).
	FaultTwoOperators FaultKind = "operator-replicas-2"
	// FaultMariaDB is not scheduled: it counts the runs of a MariaDB
	// group, whose GTIDs are domain-server-seq (Config.MariaDB, mariadb.go).
	FaultMariaDB FaultKind = "mariadb-gtids"
)

// operatorWide reports whether the kind acts on the operator, not a site.
func (k FaultKind) operatorWide() bool {
	return k == FaultOperatorDown || k == FaultPauseOperator || k == FaultOperatorClock || k == FaultRestartOperator
}

// linked reports whether the kind acts on a link, between Site and Peer.
func (k FaultKind) linked() bool {
	return k == FaultDropLink || k == FaultDelayLink || k == FaultOneWay
}

// Special node numbers in a Fault.
const (
	// Primary stands for the active site at the moment the fault fires.
	Primary = -1
	// OperatorNode is the operator's end of a link.
	OperatorNode = -2
)

// Fault is one scheduled fault.
type Fault struct {
	At    int
	Kind  FaultKind
	Site  int
	Peer  int // links only
	Dur   int
	Delay int // delay-link and slow-fence only
	By    int // skew: the clock offset in steps; restart-operator: die after this many status writes (0: now)
}

// Schedule is a run's faults in firing order.
type Schedule []Fault

func nodeName(n int) string {
	switch n {
	case Primary:
		return "primary"
	case OperatorNode:
		return "operator"
	}
	return strconv.Itoa(n)
}

func (f Fault) String() string {
	s := fmt.Sprintf("at=%d %s", f.At, f.Kind)
	if !f.Kind.operatorWide() {
		s += " site=" + nodeName(f.Site)
	}
	if f.Kind.linked() {
		s += " peer=" + nodeName(f.Peer)
	}
	if f.Kind == FaultDelayLink || f.Kind == FaultSlowFence {
		s += fmt.Sprintf(" delay=%d", f.Delay)
	}
	if f.Kind == FaultSkew || f.Kind == FaultOperatorClock || (f.Kind == FaultRestartOperator && f.By > 0) {
		s += fmt.Sprintf(" by=%d", f.By)
	}
	if f.Dur > 0 {
		s += fmt.Sprintf(" dur=%d", f.Dur)
	}
	return s
}

// String renders the schedule one fault per line; ParseSchedule reads it back.
func (s Schedule) String() string {
	lines := make([]string, len(s))
	for i, f := range s {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// ParseSchedule reads a schedule in String's form (lines or ";"-separated).
func ParseSchedule(text string) (Schedule, error) {
	var out Schedule
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' }) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f, err := parseFault(line)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %w", strings.TrimSpace(line), err)
		}
		out = append(out, f.normalized())
	}
	return out, nil
}

func parseFault(line string) (Fault, error) {
	f := Fault{Site: Primary}
	for _, field := range strings.Fields(line) {
		key, val, ok := strings.Cut(field, "=")
		if !ok {
			f.Kind = FaultKind(field)
			continue
		}
		n, err := parseNode(val)
		if err != nil {
			return f, err
		}
		switch key {
		case "at":
			f.At = n
		case "site":
			f.Site = n
		case "peer":
			f.Peer = n
		case "dur":
			f.Dur = n
		case "delay":
			f.Delay = n
		case "by":
			f.By = n
		default:
			return f, fmt.Errorf("key %q: %w", key, ErrSchedule)
		}
	}
	if f.Kind == "" {
		return f, fmt.Errorf("no fault kind: %w", ErrSchedule)
	}
	return f, nil
}

func parseNode(v string) (int, error) {
	switch v {
	case "primary":
		return Primary, nil
	case "operator":
		return OperatorNode, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("number %q: %w", v, ErrSchedule)
	}
	return n, nil
}

// weightedKind is a fault kind's weight in a generated schedule.
type weightedKind struct {
	kind    FaultKind
	primary bool // aim at the active site
	weight  int
}

// realOperatorKinds follow weightedKinds in the draw: they came with the
// real operator (a process to pause, a clock to skew, an API to send
// forged or late reports to). Their order is part of every seed's schedule.
var realOperatorKinds = []weightedKind{
	{FaultPauseOperator, false, 2}, {FaultPauseSite, true, 2}, {FaultPauseSite, false, 1},
	{FaultLossyReplies, true, 1}, {FaultLossyReplies, false, 1}, {FaultSkew, false, 2},
	{FaultLateReport, false, 2}, {FaultLateView, false, 2}, {FaultOrphanPod, true, 1},
	{FaultOrphanPod, false, 1}, {FaultForgeReport, true, 2},
	{FaultPauseMySQL, true, 2}, {FaultPauseMySQL, false, 1}, {FaultFailFence, true, 2},
	{FaultSlowFence, true, 2}, {FaultOneWay, false, 3}, {FaultOneWay, true, 2},
	{FaultPauseSidecar, true, 2}, {FaultPauseSidecar, false, 1},
	// Weight 0: drawn apart, after the others (drawPowerLosses), so that
	// adding the kind left every other fault of every seed as it was.
	{FaultPowerLoss, true, 0},
	{FaultTwoOperators, false, 0},    // counted per run, never drawn
	{FaultMariaDB, false, 0},         // counted per run, never drawn
	{FaultOperatorClock, false, 0},   // drawn apart, after power losses (drawOperatorClock)
	{FaultRestartOperator, false, 0}, // drawn apart, last (drawOperatorRestarts)
}

// weightedKinds lists fault kinds with their weights in a generated schedule.
var weightedKinds = []weightedKind{
	{FaultKillPod, true, 3}, {FaultCrashMySQL, true, 2}, {FaultPartition, true, 4},
	{FaultPartition, false, 2}, {FaultKillPod, false, 1}, {FaultDropLink, false, 4},
	{FaultDelayLink, false, 2}, {FaultOperatorDown, false, 3}, {FaultSlowReplica, false, 2},
	{FaultPlanned, false, 4}, {FaultAdminFence, false, 1}, {FaultReclone, false, 2},
	{FaultRestartSide, false, 2},
}

// GenerateSchedule draws a fault schedule for a run of c.Steps steps over
// len(c.Roles) sites from rng. Faults overlap freely.
func GenerateSchedule(rng *rand.Rand, c Config) Schedule {
	kinds := append(slices.Clone(weightedKinds), realOperatorKinds...)
	total := 0
	for _, w := range kinds {
		total += w.weight
	}
	n := len(c.Roles)
	var out Schedule
	for at := 10 + rng.IntN(30); at < c.Steps-30; at += 5 + rng.IntN(50) {
		pick := rng.IntN(total)
		i := 0
		for ; pick >= kinds[i].weight; i++ {
			pick -= kinds[i].weight
		}
		w := kinds[i]
		f := Fault{At: at, Kind: w.kind, Site: rng.IntN(n), Dur: 2 + rng.IntN(rng.IntN(90)+1)}
		if w.primary {
			f.Site = Primary
		}
		if f.Kind.linked() {
			f.Peer = OperatorNode
			if p := rng.IntN(n + 1); p < n && p != f.Site {
				f.Peer = p
			}
			f.Delay = 1 + rng.IntN(4)
			if f.Kind == FaultOneWay && rng.IntN(2) == 0 {
				f.Site, f.Peer = f.Peer, f.Site // the other way round
			}
		}
		if f.Kind == FaultSlowFence {
			f.Delay = 1 + rng.IntN(8)
		}
		if f.Kind == FaultSkew {
			f.By = rng.IntN(121) - 60 // up to a minute either way
		}
		out = append(out, f.normalized())
	}
	out = drawPowerLosses(rng, c, out)
	return drawOperatorRestarts(rng, c, drawOperatorClock(rng, c, out))
}

// drawPowerLosses adds power losses to s, every 40 to 160 steps, two in
// three on the active site; each lasts as long as a node's reboot, 20 s to
// 2 min. They are drawn after every other fault, from the same generator.
func drawPowerLosses(rng *rand.Rand, c Config, s Schedule) Schedule {
	for at := 20 + rng.IntN(60); at < c.Steps-30; at += 40 + rng.IntN(120) {
		f := Fault{At: at, Kind: FaultPowerLoss, Site: Primary, Dur: 20 + rng.IntN(100)}
		if rng.IntN(3) == 0 {
			f.Site = rng.IntN(len(c.Roles))
		}
		s = append(s, f)
	}
	slices.SortStableFunc(s, func(a, b Fault) int { return a.At - b.At })
	return s
}

// normalized clears the fields a fault's kind does not use, so that a
// schedule equals its parsed String.
func (f Fault) normalized() Fault {
	if !f.Kind.linked() {
		f.Peer = 0
	}
	if f.Kind != FaultDelayLink && f.Kind != FaultSlowFence {
		f.Delay = 0
	}
	if f.Kind != FaultSkew && f.Kind != FaultOperatorClock && f.Kind != FaultRestartOperator {
		f.By = 0
	}
	if f.Kind.operatorWide() {
		f.Site = Primary
	}
	switch f.Kind {
	case FaultPlanned, FaultReclone, FaultRestartSide, FaultSkew, FaultLateReport, FaultLateView, FaultForgeReport, FaultOperatorClock:
		f.Dur = 0
	}
	return f
}
