package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// StepDuration is the logical time one simulation step stands for.
const StepDuration = time.Second

// Epoch is the logical time of step 0.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// siteNames name the sites in spec order.
var siteNames = []string{"iad", "pdx", "fra", "syd"}

// Config is one simulation run. ConfigForSeed derives every field from a seed.
type Config struct {
	Seed              uint64
	Steps             int
	Roles             []v1alpha1.SiteRole // one per site, spec order
	PollInterval      time.Duration
	FailureThreshold  int
	RecoveryThreshold int
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	Cooldown          time.Duration
	MaxLagWait        time.Duration // planned failover's catch-up budget
	DrainTimeout      time.Duration // emergency relay-log drain budget
	WriteChance       float64       // chance a writable mysqld commits a client write per step

	// Schedule is the fault schedule; nil means generate it from the seed.
	Schedule Schedule

	// Sidecar, when set, changes the Config of every sidecar process
	// before it starts: tests break a sidecar on purpose, to prove the
	// checker sees what follows; nil means none.
	Sidecar func(*sidecar.Config)
	// Instance, when set, wraps every mysqld the operator opens, so that
	// tests can break a server's answers on purpose; nil means none.
	Instance func(mysql.Instance) mysql.Instance

	// OperatorReplicas is how many operator processes run, elected
	// through one lock (0 means 1).
	OperatorReplicas int
	// MariaDB makes the group a MariaDB one: domain-server-seq GTIDs and
	// MariaDB's GTID variables (real operator only, mariadb.go).
	MariaDB bool
}

// ConfigForSeed derives a run's parameters from its seed: two to four sites
// with random roles beyond the first two, and random timings within the
// ranges the CRD allows (leaseTimeout at least three peerCheckIntervals).
func ConfigForSeed(seed uint64, steps int) Config {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 2 + rng.IntN(2)
	if rng.IntN(8) == 0 {
		n = 4
	}
	roles := []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate}
	others := []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate, v1alpha1.RoleDROnly, v1alpha1.RoleReadOnly}
	for len(roles) < n {
		roles = append(roles, others[rng.IntN(len(others))])
	}
	pci := time.Duration(2+rng.IntN(5)) * time.Second
	return Config{
		Seed:              seed,
		Steps:             steps,
		Roles:             roles,
		PollInterval:      time.Duration(1+rng.IntN(3)) * time.Second,
		FailureThreshold:  2 + rng.IntN(3),
		RecoveryThreshold: 1 + rng.IntN(3),
		PeerCheckInterval: pci,
		LeaseTimeout:      pci * time.Duration(3+rng.IntN(3)),
		Cooldown:          time.Duration(20+rng.IntN(60)) * time.Second,
		MaxLagWait:        time.Duration(10+rng.IntN(30)) * time.Second,
		DrainTimeout:      time.Duration(5+rng.IntN(20)) * time.Second,
		WriteChance:       0.5 + rng.Float64()/2,
		// One run in three has a standby replica: requests that land on
		// it are answered 503, and a paused leader's lock passes to it.
		OperatorReplicas: 1 + oneInThree(seed),
		// One run in three is a MariaDB group (mariadb.go).
		MariaDB: mariaDBRun(seed),
	}
}

// oneInThree is 1 for one seed in three, drawn apart from the Config's
// other fields.
func oneInThree(seed uint64) int {
	if rand.New(rand.NewPCG(seed, 0x2e9)).IntN(3) == 0 {
		return 1
	}
	return 0
}

func (c Config) validate() error {
	switch {
	case len(c.Roles) < 2 || len(c.Roles) > len(siteNames):
		return fmt.Errorf("%d sites: %w", len(c.Roles), ErrConfig)
	case c.Roles[0] != v1alpha1.RolePrimaryCandidate:
		return fmt.Errorf("first site must be a primary candidate: %w", ErrConfig)
	case c.PollInterval < StepDuration || c.PeerCheckInterval < StepDuration:
		return fmt.Errorf("intervals below one step: %w", ErrConfig)
	case c.LeaseTimeout < 3*c.PeerCheckInterval:
		return fmt.Errorf("leaseTimeout %s below 3 x peerCheckInterval %s: %w", c.LeaseTimeout, c.PeerCheckInterval, ErrConfig)
	case c.FailureThreshold < 1 || c.RecoveryThreshold < 1:
		return fmt.Errorf("thresholds below one: %w", ErrConfig)
	}
	return nil
}

func (c Config) withDefaults() Config {
	return c
}

func (c Config) String() string {
	roles := make([]string, len(c.Roles))
	for i, r := range c.Roles {
		roles[i] = siteNames[i] + "=" + string(r)
	}
	return fmt.Sprintf("seed=%d steps=%d sites=%s poll=%s failureThreshold=%d recoveryThreshold=%d "+
		"leaseTimeout=%s peerCheckInterval=%s cooldown=%s maxLagWait=%s drainTimeout=%s writeChance=%.2f",
		c.Seed, c.Steps, strings.Join(roles, ","), c.PollInterval, c.FailureThreshold, c.RecoveryThreshold,
		c.LeaseTimeout, c.PeerCheckInterval, c.Cooldown, c.MaxLagWait, c.DrainTimeout, c.WriteChance)
}

// steps converts a duration to whole steps, at least one.
func steps(d time.Duration) int { return max(1, int(d/StepDuration)) }
