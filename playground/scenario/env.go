package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"

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
	dyn dynamic.Interface
}

// Options of Start.
type Options struct {
	Root     string    // the repository; found from the working folder when empty
	Log      io.Writer // progress; os.Stderr when nil
	StateDir string    // the cluster's state folder; a fresh one when empty
}

// Start brings up a two-site local cluster and installs the operator with the
// Helm chart. A missing prerequisite is an error.
func Start(ctx context.Context, o Options) (*Env, error) {
	if o.Log == nil {
		o.Log = os.Stderr
	}
	root, err := repoRoot(o.Root)
	if err != nil {
		return nil, err
	}
	crds, err := filepath.Glob(filepath.Join(root, "charts", "bloodraven", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in charts/bloodraven/crds: %v", err)
	}
	uctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// A killed container comes back after 10 s, as with the real kubelet's
	// first restart: longer than failure detection.
	c, err := localcluster.Up(uctx, localcluster.Options{RepoRoot: root, StateDir: o.StateDir,
		Sites: append(append([]string(nil), Sites...), controlSite), CRDs: crds, OperatorSelector: operatorSelector,
		BackoffInitial: 10 * time.Second, BackoffMax: 10 * time.Second, Progress: o.Log})
	if err != nil {
		return nil, fmt.Errorf("localcluster up: %w", err)
	}
	e := &Env{C: c, Root: root, Log: o.Log}
	if e.dyn, err = dynamic.NewForConfig(c.Config); err == nil {
		err = e.installOperator(ctx)
	}
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

// repoRoot finds the repository (the folder with go.mod and bin/operator).
func repoRoot(root string) (string, error) {
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working folder: %w", err)
		}
		for root = wd; ; root = filepath.Dir(root) {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			if filepath.Dir(root) == root {
				return "", fmt.Errorf("no go.mod above %s", wd)
			}
		}
	}
	for _, bin := range []string{"operator", "sidecar"} {
		if _, err := os.Stat(filepath.Join(root, "bin", bin)); err != nil {
			return "", fmt.Errorf("bin/%s missing: run 'make build': %w", bin, err)
		}
	}
	return root, nil
}

// installOperator renders the chart with helm and applies it, then waits
// for the operator to run.
func (e *Env) installOperator(ctx context.Context) error {
	helm := filepath.Join(cacheDir(), "bin", "helm")
	out, err := exec.CommandContext(ctx, helm, "template", "bloodraven",
		filepath.Join(e.Root, "charts", "bloodraven"), "--namespace", "bloodraven-system",
		"--set", `nodeSelector.topology\.kubernetes\.io/zone=`+controlSite).Output()
	if err != nil {
		return fmt.Errorf("helm template (run 'make deps' for %s): %w", helm, err)
	}
	if _, err := e.C.Kubectl(ctx, "create", "namespace", "bloodraven-system"); err != nil {
		return err
	}
	if err := e.apply(ctx, string(out)); err != nil {
		return err
	}
	_, err = e.C.Kubectl(ctx, "-n", "bloodraven-system", "rollout", "status", "deploy/bloodraven", "--timeout=90s")
	return err
}

// apply applies a manifest with kubectl.
func (e *Env) apply(ctx context.Context, yaml string) error {
	f, err := os.CreateTemp("", "scenario-*.yaml")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(yaml); err != nil {
		return errors.Join(fmt.Errorf("manifest: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	_, err = e.C.Kubectl(ctx, "apply", "-f", f.Name())
	return err
}

func cacheDir() string {
	if d := os.Getenv("BLOODRAVEN_CACHE"); d != "" {
		return d
	}
	if base, err := os.UserCacheDir(); err == nil {
		return filepath.Join(base, "bloodraven")
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "bloodraven")
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
