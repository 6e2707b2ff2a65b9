//go:build localcluster

package localcluster_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestZCleanup runs last: Down removes every process, namespace, nft table
// and mount the cluster made. Down itself fails on leftovers; this checks
// again from the outside.
func TestZCleanup(t *testing.T) {
	c := cluster(t)
	id, state := c.ID, c.StateDir
	keep := anyFailed || os.Getenv("LOCALCLUSTER_KEEP_STATE") == "1"
	if keep {
		c.KeepStateOnDown()
		t.Logf("keeping the state folder %s for its logs", state)
	}
	made, _ := os.ReadFile("/run/bloodraven-localcluster/created-dirs")
	start := time.Now()
	err := c.Down()
	shared = nil
	if err != nil {
		t.Fatalf("down: %v", err)
	}
	t.Logf("down in %.1fs", time.Since(start).Seconds())
	if left := c.Leftovers(); len(left) > 0 {
		t.Fatalf("leftovers after down: %v", left)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), id) {
		t.Errorf("network namespaces left: %s", out)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), id) || strings.Contains(string(mounts), state) {
		t.Errorf("mounts left:\n%s", mounts)
	}
	if _, err := os.Stat(state); !keep && !os.IsNotExist(err) {
		t.Errorf("state folder %s left: %v", state, err)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); !strings.Contains(string(out), "brlc-") {
		// No other cluster runs: the mount points containers made are gone.
		for _, p := range strings.Fields(string(made)) {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("mount point %s made for a container is left", p)
			}
		}
	}
	procs, _ := exec.Command("pgrep", "-f", state).Output()
	if len(strings.TrimSpace(string(procs))) > 0 {
		t.Errorf("processes naming the state folder left: %s", procs)
	}
}
