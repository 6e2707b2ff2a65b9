package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

// Chart is a release of charts/bloodraven. The zero value installs release
// "bloodraven" into "bloodraven-system" from the repository found above the
// working folder, with the chart's default values.
type Chart struct {
	Root      string   // the repository (charts/bloodraven, bin/operator, bin/sidecar)
	Helm      string   // the helm binary; default CacheDir()/bin/helm (make deps)
	Release   string   // default "bloodraven"
	Namespace string   // default "bloodraven-system"
	Set       []string // helm --set values
	SetJSON   []string // helm --set-json values
	// Timeout bounds the wait for the operator (default 2 minutes).
	Timeout time.Duration
}

func (ch *Chart) defaults() error {
	if ch.Root == "" {
		root, err := RepoRoot()
		if err != nil {
			return err
		}
		ch.Root = root
	}
	if ch.Helm == "" {
		ch.Helm = filepath.Join(CacheDir(), "bin", "helm")
	}
	if ch.Release == "" {
		ch.Release = "bloodraven"
	}
	if ch.Namespace == "" {
		ch.Namespace = "bloodraven-system"
	}
	if ch.Timeout == 0 {
		ch.Timeout = 2 * time.Minute
	}
	return CheckBinaries(ch.Root)
}

// Install runs `helm install` against the cluster (the chart's CRDs come
// with it) and waits until the operator Pod is Ready and the operator's
// Service, which sidecars call, has it as an endpoint.
func Install(ctx context.Context, c *localcluster.Cluster, ch Chart) error {
	if err := ch.defaults(); err != nil {
		return err
	}
	if err := ch.helm(ctx, c, "install", "--create-namespace"); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, ch.Timeout)
	defer cancel()
	return WaitOperator(wctx, c, ch.Namespace, ch.Release)
}

// Upgrade runs `helm upgrade --reuse-values` with ch.Set and ch.SetJSON:
// what a user does to move to a new operator release. It does not wait;
// the Deployment replaces the operator Pod (Recreate: only the leader is
// Ready), and the new one takes the Lease the old one handed back.
func Upgrade(ctx context.Context, c *localcluster.Cluster, ch Chart) error {
	if err := ch.defaults(); err != nil {
		return err
	}
	return ch.helm(ctx, c, "upgrade", "--reuse-values")
}

// helm runs one helm command on the release with ch's values.
func (ch *Chart) helm(ctx context.Context, c *localcluster.Cluster, verb string, flags ...string) error {
	if _, err := os.Stat(ch.Helm); err != nil {
		return fmt.Errorf("helm not found at %s (run 'make deps'): %w", ch.Helm, err)
	}
	args := append([]string{verb, ch.Release, filepath.Join(ch.Root, "charts", "bloodraven"),
		"--kubeconfig", c.Kubeconfig(), "--namespace", ch.Namespace}, flags...)
	for _, s := range ch.Set {
		args = append(args, "--set", s)
	}
	for _, s := range ch.SetJSON {
		args = append(args, "--set-json", s)
	}
	cmd := exec.CommandContext(ctx, ch.Helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(c.StateDir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(c.StateDir, "helm", "config"), "HELM_DATA_HOME="+filepath.Join(c.StateDir, "helm", "data"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w: %s", verb, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// WaitOperator waits until a Pod of the release is Ready with an IP and the
// Service named after the release lists that IP as a ready endpoint.
func WaitOperator(ctx context.Context, c *localcluster.Cluster, ns, release string) error {
	return poll(ctx, "operator Ready behind its Service", func() error {
		ip, err := readyPodIP(ctx, c, ns, "app.kubernetes.io/instance="+release)
		if err != nil {
			return err
		}
		return hasEndpoint(ctx, c, ns, release, ip)
	})
}

func readyPodIP(ctx context.Context, c *localcluster.Cluster, ns, selector string) (string, error) {
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", fmt.Errorf("list pods: %w", err)
	}
	var seen []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && podReady(&p) {
			return p.Status.PodIP, nil
		}
		seen = append(seen, fmt.Sprintf("%s %s ip=%q", p.Name, p.Status.Phase, p.Status.PodIP))
	}
	return "", fmt.Errorf("no Ready pod %s: %v", selector, seen)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasEndpoint(ctx context.Context, c *localcluster.Cluster, ns, svc, ip string) error {
	slices, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return fmt.Errorf("list endpointslices: %w", err)
	}
	for _, s := range slices.Items {
		for _, ep := range s.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			for _, a := range ep.Addresses {
				if a == ip && ready {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("service %s/%s has no ready endpoint %s", ns, svc, ip)
}

// poll runs cond every 250 ms until it holds or ctx ends.
func poll(ctx context.Context, what string, cond func() error) error {
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %w)", what, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// CheckBinaries says what to run when bin/operator or bin/sidecar is missing.
func CheckBinaries(root string) error {
	var errs []error
	for _, bin := range []string{"operator", "sidecar"} {
		if _, err := os.Stat(filepath.Join(root, "bin", bin)); err != nil {
			errs = append(errs, fmt.Errorf("bin/%s missing: run 'make build': %w", bin, err))
		}
	}
	return errors.Join(errs...)
}

// RepoRoot is the folder with go.mod at or above the working folder.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working folder: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s", wd)
		}
	}
}

// CacheDir is where make deps puts helm and the Kubernetes binaries:
// $BLOODRAVEN_CACHE, else $XDG_CACHE_HOME/bloodraven, else ~/.cache/bloodraven.
func CacheDir() string {
	if d := os.Getenv("BLOODRAVEN_CACHE"); d != "" {
		return d
	}
	if base, err := os.UserCacheDir(); err == nil {
		return filepath.Join(base, "bloodraven")
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "bloodraven")
}

// Kubectl is the pinned kubectl in the cache.
func Kubectl() string {
	return filepath.Join(CacheDir(), "kube", localcluster.KubeVersion, "kubectl")
}
