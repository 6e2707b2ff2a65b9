package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// preflight checks what Up needs and says how to get what is missing.
func preflight(o *Options) error {
	if !initCalled {
		return errors.New("localcluster.Init() was not called: call it first in main() or TestMain")
	}
	if os.Geteuid() != 0 {
		return errors.New("localcluster needs root (network namespaces, nft, bind mounts); run as root")
	}
	var missing []string
	for _, tool := range []string{"ip", "nft", "mariadbd", "mariadb-install-db"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (make deps)")
		}
	}
	if !o.NoDNS {
		if _, err := exec.LookPath("named"); err != nil {
			missing = append(missing, "named (make deps: bind9)")
		}
		if !isExec(o.ExternalDNSBin()) {
			missing = append(missing, o.ExternalDNSBin()+" (hack/external-dns.sh)")
		}
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"} {
		if p := filepath.Join(o.KubeBinDir(), b); !isExec(p) {
			missing = append(missing, p+" (hack/kube-binaries.sh)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("localcluster prerequisites missing:\n  %s", strings.Join(missing, "\n  "))
	}
	return checkNetNS()
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// checkNetNS makes and removes a throw-away namespace to prove support.
func checkNetNS() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := "brlc-check-" + randomID() // never 11 characters: not a cluster
	if err := nsutil.Create(ctx, name); err != nil {
		return fmt.Errorf("network namespaces are not available here (need root with CAP_SYS_ADMIN and CAP_NET_ADMIN): %w", err)
	}
	if err := nsutil.NFT(ctx, name, "table inet probe\ndelete table inet probe\n"); err != nil {
		_ = nsutil.Delete(ctx, name)
		return fmt.Errorf("nft does not work inside a network namespace: %w", err)
	}
	return nsutil.Delete(ctx, name)
}

func randomID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dnsEndpointCRD finds the DNSEndpoint CRD: the repository's copy, else the
// one inside the external-dns module.
func dnsEndpointCRD(o *Options) (string, error) {
	const file = "dnsendpoints.externaldns.k8s.io.yaml"
	if p := filepath.Join(o.RepoRoot, "test", "crds", file); isFile(p) {
		return p, nil
	}
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("locate the DNSEndpoint CRD: go env GOMODCACHE: %w", err)
		}
		modcache = strings.TrimSpace(string(out))
	}
	p := filepath.Join(modcache, "sigs.k8s.io", "external-dns@"+ExternalDNSVersion, "config", "crd", "standard", file)
	if !isFile(p) {
		return "", fmt.Errorf("DNSEndpoint CRD not found at %s (go mod download sigs.k8s.io/external-dns)", p)
	}
	return p, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
