package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

// operatorSelector finds the operator's Pods (the chart's name label).
const operatorSelector = "app.kubernetes.io/name=bloodraven"

// controlSite is a node of its own for the operator, so that cutting a
// site off never cuts the operator off with it.
const controlSite = "control"

// Env is one local cluster with the operator installed.
type Env struct {
	C    *localcluster.Cluster
	Root string // the repository
	// Log receives progress lines.
	Log io.Writer
	// BootstrapFailovers lists the new groups that failed over while
	// booting (see NewGroup).
	BootstrapFailovers []string
}

// Options of Start.
type Options struct {
	Root     string    // the repository; found from the working folder when empty
	Log      io.Writer // progress; os.Stderr when nil
	StateDir string    // the cluster's state folder; a fresh one when empty
}

// Start brings up a local cluster with a node for each of Sites and
// ThirdSite (most groups use only the first two) and installs the operator
// with the Helm chart. A missing prerequisite is an error.
func Start(ctx context.Context, o Options) (*Env, error) {
	if o.Log == nil {
		o.Log = os.Stderr
	}
	root, err := repoRoot(o.Root)
	if err != nil {
		return nil, err
	}
	uctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// A killed container comes back after 10 s, as with the real kubelet's
	// first restart: longer than failure detection.
	c, err := localcluster.Up(uctx, localcluster.Options{RepoRoot: root, StateDir: o.StateDir,
		Sites: append(append([]string(nil), Sites...), ThirdSite, controlSite), OperatorSelector: operatorSelector,
		BackoffInitial: 10 * time.Second, BackoffMax: 10 * time.Second, Progress: o.Log})
	if err != nil {
		return nil, fmt.Errorf("localcluster up: %w", err)
	}
	e := &Env{C: c, Root: root, Log: o.Log}
	err = install.Install(ctx, c, install.Chart{Root: root,
		Set: []string{`nodeSelector.topology\.kubernetes\.io/zone=` + controlSite,
			"sidecarBinary=" + filepath.Join(root, "bin", "sidecar"),
			// The built-in mariadb image honours the hold file itself.
			"reclone.enabled=true", "reclone.mysqldEntrypoint="}})
	if err != nil {
		_ = c.Down()
		return nil, err
	}
	return e, nil
}

// Close takes the cluster down.
func (e *Env) Close() error { return e.C.Down() }

// Logf writes one progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// repoRoot is root, or the repository above the working folder, with the
// operator and sidecar binaries built.
func repoRoot(root string) (string, error) {
	if root == "" {
		var err error
		if root, err = install.RepoRoot(); err != nil {
			return "", err
		}
	}
	return root, install.CheckBinaries(root)
}

// OperatorPod returns the operator's running Pod.
func (e *Env) OperatorPod(ctx context.Context) (string, error) {
	out, err := e.C.Kubectl(ctx, "-n", "bloodraven-system", "get", "pods", "-l",
		operatorSelector, "--field-selector=status.phase=Running",
		"-o", "jsonpath={.items[*].metadata.name}")
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(out))
	if len(f) != 1 {
		return "", fmt.Errorf("operator pods %q, want one running", out)
	}
	return f[0], nil
}
