//go:build db

package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
const clockTicks = 100

// BenchmarkSidecarIdle runs the built sidecar (BLOODRAVEN_SIDECAR_BIN, or a
// fresh build) with the default timings against a real MariaDB, a stub
// operator and a stub peer, and measures it from /proc over 60 s
// (BLOODRAVEN_BENCH_SECONDS): the highest resident set and the CPU share.
// make bench-sidecar runs it and keeps the two result lines.
func BenchmarkSidecarIdle(b *testing.B) {
	window := 60 * time.Second
	if s := os.Getenv("BLOODRAVEN_BENCH_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("BLOODRAVEN_BENCH_SECONDS=%q: %v", s, err)
		}
		window = time.Duration(n) * time.Second
	}
	pid := startIdleSidecar(b)
	b.ResetTimer()
	ticks0 := cpuTicks(b, pid)
	start := time.Now()
	peak := 0
	for time.Since(start) < window {
		peak = max(peak, rssKiB(b, pid))
		time.Sleep(time.Second)
	}
	cpu := float64(cpuTicks(b, pid)-ticks0) / clockTicks / time.Since(start).Seconds() * 100
	b.StopTimer()
	fmt.Printf("sidecar-idle-rss %.1f MiB\nsidecar-idle-cpu %.2f percent\n", float64(peak)/1024, cpu)
}

// startIdleSidecar starts the sidecar process and waits until it is ready.
func startIdleSidecar(b *testing.B) int {
	b.Helper()
	bin := sidecarBinary(b)
	c := testbed.StartMariaDB(b, 1, testbed.WithoutReplication())
	signer, keysFile := idleViewKeys(b)
	view := func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(signer.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad",
			Generation: 1, ObservedAt: time.Now(), Operator: "bench"}))
	}
	// As deployed: TLS to the operator and the peer, with the site's certificate.
	ca, tlsDir := idleCA(b)
	op := idleTLSServer(b, ca, pki.OperatorIdentity(), http.HandlerFunc(view))
	peer := idleTLSServer(b, ca, pki.SiteIdentity("shop", "orders", "pdx"), http.HandlerFunc(view))
	addr, health := freeAddr(b), freeAddr(b)
	cmd := exec.Command(bin, "-namespace", "shop", "-group", "orders", "-site", "iad", "-operator-url", op,
		"-peers", "pdx="+peer, "-listen", addr, "-health-listen", health, "-tls-dir", tlsDir,
		"-log-level", "warn", "-view-keys", keysFile, "-state-dir", b.TempDir())
	cmd.Env = append(os.Environ(), "BLOODRAVEN_MYSQL_DSN=root@unix("+c.Socket(0)+")/")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", bin, err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + health + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd.Process.Pid
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("sidecar not ready on %s after 20 s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// idleViewKeys is a signing key for the stub operator and the file of its
// public key for the sidecar.
func idleViewKeys(b *testing.B) (*protocol.Signer, string) {
	b.Helper()
	s, err := protocol.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		b.Fatal(err)
	}
	pem, err := protocol.EncodePublicKeys(s.Public())
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "keys.pem")
	if err := os.WriteFile(file, pem, 0o600); err != nil {
		b.Fatal(err)
	}
	return s, file
}

// sidecarBinary is $BLOODRAVEN_SIDECAR_BIN, or the command built into a temp dir.
func sidecarBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("BLOODRAVEN_SIDECAR_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "sidecar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build sidecar: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// cpuTicks is utime + stime of the process, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which ends with the last ')': state is
	// field 3, utime 14 and stime 15.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parse /proc/%d/stat: %v %v", pid, err1, err2)
	}
	return utime + stime
}

// rssKiB is VmRSS from /proc/<pid>/status.
func rssKiB(b *testing.B, pid int) int {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatalf("VmRSS %q: %v", rest, err)
			}
			return n
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// idleCA is a CA and a folder with the site iad's certificate Secret files.
func idleCA(b *testing.B) (*pki.CA, string) {
	b.Helper()
	ca, err := pki.NewCA("bench", time.Now(), pki.CAValidity)
	if err != nil {
		b.Fatal(err)
	}
	is, err := ca.Issue(pki.Request{Identity: pki.SiteIdentity("shop", "orders", "iad")}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for name, data := range map[string][]byte{"tls.crt": is.CertPEM, "tls.key": is.KeyPEM, "ca.crt": ca.BundlePEM()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return ca, dir
}

// idleTLSServer serves h over TLS as id, with a certificate from ca, and
// returns its https URL.
func idleTLSServer(b *testing.B, ca *pki.CA, id pki.Identity, h http.Handler) string {
	b.Helper()
	is, err := ca.Issue(pki.Request{Identity: id}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cert, err := is.TLS()
	if err != nil {
		b.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(pki.StaticSource{Cert: &cert, Roots: ca.Pool()}))
	s.Start()
	b.Cleanup(s.Close)
	return strings.Replace(s.URL, "http://", "https://", 1)
}
