package dns

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyName is the TSIG key external-dns signs its updates with.
const KeyName = "externaldns"

// Config describes the zone and where things listen.
type Config struct {
	Dir        string // BIND's working folder
	Zone       string // e.g. bloodraven.test
	Addr       string // BIND's address (port 53) in the core namespace
	Kubeconfig string // for external-dns, reaching the API server from the core namespace
	OwnerID    string
	Secret     string // base64 TSIG secret; made when empty
}

// Write makes the BIND configuration and zone file and returns named's and
// external-dns's argument lists.
func Write(cfg *Config) (named, externalDNS []string, err error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("dns folder: %w", err)
	}
	if cfg.Secret == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		cfg.Secret = base64.StdEncoding.EncodeToString(b)
	}
	zone := strings.TrimSuffix(cfg.Zone, ".")
	conf := filepath.Join(cfg.Dir, "named.conf")
	if err := os.WriteFile(conf, []byte(namedConf(cfg, zone)), 0o644); err != nil {
		return nil, nil, fmt.Errorf("write named.conf: %w", err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, zone+".db"), []byte(zoneFile(zone, cfg.Addr)), 0o644); err != nil {
		return nil, nil, fmt.Errorf("write zone file: %w", err)
	}
	named = []string{"named", "-g", "-4", "-c", conf}
	externalDNS = []string{
		"--source=crd", "--crd-source-apiversion=externaldns.k8s.io/v1alpha1", "--crd-source-kind=DNSEndpoint",
		"--provider=rfc2136", "--rfc2136-host=" + cfg.Addr, "--rfc2136-port=53", "--rfc2136-zone=" + zone,
		"--rfc2136-tsig-keyname=" + KeyName, "--rfc2136-tsig-secret=" + cfg.Secret,
		"--rfc2136-tsig-secret-alg=hmac-sha256", "--rfc2136-tsig-axfr",
		"--domain-filter=" + zone, "--registry=txt", "--txt-owner-id=" + cfg.OwnerID,
		// external-dns checks once a second whether a run is due; an interval
		// under that second makes every check run.
		"--policy=sync", "--interval=500ms",
		"--metrics-address=127.0.0.1:7979",
		"--kubeconfig=" + cfg.Kubeconfig, "--log-level=info",
	}
	return named, externalDNS, nil
}

func namedConf(cfg *Config, zone string) string {
	return fmt.Sprintf(`options {
	directory "%[1]s";
	pid-file "%[1]s/named.pid";
	session-keyfile "%[1]s/session.key";
	managed-keys-directory "%[1]s";
	listen-on port 53 { %[2]s; };
	listen-on-v6 { none; };
	recursion no;
	allow-query { any; };
	dnssec-validation no;
	notify no;
};
key "%[3]s" {
	algorithm hmac-sha256;
	secret "%[4]s";
};
controls { };
zone "%[5]s" {
	type primary;
	file "%[1]s/%[5]s.db";
	allow-update { key "%[3]s"; };
	allow-transfer { key "%[3]s"; };
};
`, cfg.Dir, cfg.Addr, KeyName, cfg.Secret, zone)
}

func zoneFile(zone, addr string) string {
	return fmt.Sprintf(`$TTL 5
@	IN SOA ns.%[1]s. admin.%[1]s. ( 1 5 5 60 5 )
	IN NS ns.%[1]s.
ns	IN A %[2]s
`, zone, addr)
}
