//go:build playground

package scenario

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

// One cluster for the whole test binary, started by the first scenario.
var (
	envOnce sync.Once
	env     *Env
	envErr  error
)

func TestMain(m *testing.M) {
	localcluster.Init()
	code := m.Run()
	if env != nil {
		if err := env.Close(); err != nil {
			os.Stderr.WriteString("localcluster down: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// run runs one registered scenario; a missing prerequisite fails the test.
func run(t *testing.T, name string) {
	envOnce.Do(func() {
		env, envErr = Start(context.Background(), Options{Log: os.Stderr})
	})
	if envErr != nil {
		t.Fatalf("playground: %v", envErr)
	}
	s, ok := Lookup(name)
	if !ok {
		t.Fatalf("no scenario %q", name)
	}
	env.Log = testLog{t}
	defer func() { env.Log = os.Stderr }()
	r := env.Run(t.Context(), s)
	t.Log(r.String())
	if !r.Passed() {
		t.Fail()
	}
}

func TestScenarioPrimaryKilled(t *testing.T)              { run(t, "primary-killed") }
func TestScenarioPlannedUnderLoad(t *testing.T)           { run(t, "planned-under-load") }
func TestScenarioIsolatedPrimary(t *testing.T)            { run(t, "isolated-primary") }
func TestScenarioOperatorRestart(t *testing.T)            { run(t, "operator-restart") }
func TestScenarioReplicaPartitioned(t *testing.T)         { run(t, "replica-partitioned") }
func TestScenarioSidecarCrash(t *testing.T)               { run(t, "sidecar-crash") }
func TestScenarioOperatorKilledMidFailover(t *testing.T)  { run(t, "operator-killed-mid-failover") }
func TestScenarioStalePrimary(t *testing.T)               { run(t, "stale-primary") }
func TestScenarioCooldown(t *testing.T)                   { run(t, "cooldown") }
func TestScenarioLaggingReplicaLoss(t *testing.T)         { run(t, "lagging-replica-loss") }
func TestScenarioPlannedLagTimeout(t *testing.T)          { run(t, "planned-lag-timeout") }
func TestScenarioDNSFollow(t *testing.T)                  { run(t, "dns-follow") }
func TestScenarioForgedMessages(t *testing.T)             { run(t, "forged-messages") }
func TestScenarioFrozenSite(t *testing.T)                 { run(t, "frozen-site") }
func TestScenarioErrantFormerPrimary(t *testing.T)        { run(t, "errant-former-primary") }
func TestScenarioSidecarRestartIsland(t *testing.T)       { run(t, "sidecar-restart-island") }
func TestScenarioLongRollbackFence(t *testing.T)          { run(t, "long-rollback-fence") }
func TestScenarioKeyRotation(t *testing.T)                { run(t, "key-rotation") }
func TestScenarioPausedSidecar(t *testing.T)              { run(t, "paused-sidecar") }
func TestScenarioIsolatedPrimaryRequired(t *testing.T)    { run(t, "isolated-primary-required") }
func TestScenarioLaggingReplicaLossRequired(t *testing.T) { run(t, "lagging-replica-loss-required") }
func TestScenarioPrimaryKilledSalvage(t *testing.T)       { run(t, "primary-killed-salvage") }
func TestScenarioRollingUpdate(t *testing.T)              { run(t, "rolling-update") }
func TestScenarioOperatorUpgrade(t *testing.T)            { run(t, "operator-upgrade") }
func TestScenarioInPlaceUpgrade(t *testing.T)             { run(t, "in-place-upgrade") }
func TestScenarioRecloneDiverged(t *testing.T)            { run(t, "reclone-diverged") }
