package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What the site Pods' logs say of a stop (docs/upgrades.md, "Instance
// lifecycle"): the process kubelet keeps each Pod's folder, logs included,
// after the Pod is gone, under <state>/nodes/<node>/<ns>_<pod>_<uid>.
const (
	// crashRecoveryLine is what MariaDB's error log says when InnoDB
	// replays its redo log at a start: the last stop was not clean.
	crashRecoveryLine = "Starting crash recovery"
	// shutdownCompleteLine ends a clean shutdown in MariaDB's error log.
	shutdownCompleteLine = "Shutdown complete"
	// signalShutdownLine is how MariaDB logs a shutdown that a signal
	// began (the kubelet's SIGTERM); one the sidecar's SHUTDOWN statement
	// began names its account instead.
	signalShutdownLine = "(initiated by: unknown): Normal shutdown"
	// terminationOverLine is the sidecar's record of the end of its
	// termination; with mysqld gone it says mysqldGone=true.
	terminationOverLine = "termination over"
)

// podLog reads the log of container in the named Pod of the group, from
// the Pod's folder, which outlives the Pod.
func (g *Group) podLog(pod, container string) (string, error) {
	pattern := filepath.Join(g.e.C.StateDir, "nodes", "*", g.NS+"_"+pod+"_*", "logs", container+".log")
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no %s log of Pod %s (%s): %v", container, pod, pattern, err)
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("log of Pod %s: %w", pod, err)
		}
		b.Write(data)
	}
	return b.String(), nil
}

// checkCleanStops fails r unless every site Pod the update replaced
// (before, by site) stopped cleanly: its sidecar's termination ended with
// mysqld gone, mysqld logged a complete shutdown that the sidecar's
// SHUTDOWN began (not the kubelet's SIGTERM: the preStop hook ran and
// held the signal back until mysqld was down), and the site's new
// mysqld (after) started without crash recovery. Acknowledged writes are
// checked by the run's history.
func checkCleanStops(_ context.Context, g *Group, before, after map[string]string, r *Result) {
	for site, old := range before {
		if after[site] == old {
			continue
		}
		side, err := g.podLog(old, "sidecar")
		switch {
		case err != nil:
			r.Failf("site %s: %v", site, err)
		case !strings.Contains(side, terminationOverLine) || !(strings.Contains(side, "mysqldGone=true") || strings.Contains(side, `"mysqldGone":true`)):
			r.Failf("site %s: the old Pod %s's sidecar did not end its termination with mysqld gone", site, old)
		}
		db, err := g.podLog(old, "mysqld")
		switch {
		case err != nil:
			r.Failf("site %s: %v", site, err)
		case !strings.Contains(db, shutdownCompleteLine):
			r.Failf("site %s: the old Pod %s's mysqld did not log a complete shutdown", site, old)
		case strings.Contains(db, signalShutdownLine):
			r.Failf("site %s: the old Pod %s's mysqld was shut down by a signal, not by the sidecar's "+
				"SHUTDOWN in the preStop hook", site, old)
		}
		fresh, err := g.podLog(after[site], "mysqld")
		switch {
		case err != nil:
			r.Failf("site %s: %v", site, err)
		case strings.Contains(fresh, crashRecoveryLine):
			r.Failf("site %s: the new Pod %s's mysqld ran a crash recovery: the old one did not stop cleanly", site, after[site])
		}
	}
	r.Notef("every replaced site Pod stopped cleanly (sidecar termination, mysqld shut down by the sidecar, no crash recovery)")
}
