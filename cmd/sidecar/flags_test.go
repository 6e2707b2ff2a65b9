package main

import (
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseOptionsFlagsWinOverEnvironment(t *testing.T) {
	o, err := parseOptions([]string{"-site", "iad", "-lease-timeout", "30s", "-peers", "pdx=http://pdx:8080, fra=http://fra:8080"},
		env(map[string]string{
			"BLOODRAVEN_SITE": "ignored", "BLOODRAVEN_GROUP": "orders", "POD_NAMESPACE": "shop",
			"BLOODRAVEN_OPERATOR_URL": "http://op:8443", "BLOODRAVEN_MYSQL_DSN": "sc:pw@unix(/run/m.sock)/",
			"BLOODRAVEN_PEER_CHECK_INTERVAL": "2s", "BLOODRAVEN_SYSTEM_USERS": "bloodraven, repl",
		}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.sidecar
	if c.Site != "iad" || c.Group != "orders" || c.Namespace != "shop" || c.OperatorURL != "http://op:8443" ||
		c.LeaseTimeout != 30*time.Second || c.PeerCheckInterval != 2*time.Second || c.RequestTimeout != 0 {
		t.Fatalf("sidecar config %+v", c)
	}
	if want := []sidecar.Peer{{Name: "pdx", URL: "http://pdx:8080"}, {Name: "fra", URL: "http://fra:8080"}}; !reflect.DeepEqual(c.Peers, want) {
		t.Fatalf("peers %+v, want %+v", c.Peers, want)
	}
	m := o.mysql
	if m.Socket != "/run/m.sock" || m.Addr != "" || m.User != "sc" || m.Password != "pw" || !reflect.DeepEqual(m.SystemUsers, []string{"bloodraven", "repl"}) {
		t.Fatalf("mysql config %+v", m)
	}
	if o.listen != ":8080" || o.logFormat != "text" {
		t.Fatalf("defaults: listen %q log format %q", o.listen, o.logFormat)
	}
}

// TestParseOptionsCloneDonor: the donor reaches mysqld as the DSN's
// account and takes the group's rate and timeout; off by default.
func TestParseOptionsCloneDonor(t *testing.T) {
	base := []string{"-group", "orders", "-site", "iad", "-operator-url", "https://op", "-tls-dir", "/t", "-health-listen", ":9"}
	o, err := parseOptions(base, env(nil), io.Discard)
	if err != nil || o.sidecar.Clone != nil {
		t.Fatalf("donor by default: %+v, %v", o.sidecar.Clone, err)
	}
	o, err = parseOptions(append(base, "-clone-donor", "true", "-max-clone-rate", "100Mi", "-clone-timeout", "2h",
		"-clone-defaults-file", "/etc/mysql/my.cnf"), env(map[string]string{"BLOODRAVEN_MYSQL_DSN": "bk:pw@tcp(127.0.0.1:3307)/"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	d := o.sidecar.Clone
	if d == nil || d.Host != "127.0.0.1" || d.Port != 3307 || d.User != "bk" || d.Password != "pw" ||
		d.Rate != 100<<20 || d.Timeout != 2*time.Hour || d.DefaultsFile != "/etc/mysql/my.cnf" {
		t.Fatalf("donor %+v", d)
	}
}

func TestParseOptionsRejects(t *testing.T) {
	base := []string{"-group", "orders", "-site", "iad", "-operator-url", "http://op"}
	for name, args := range map[string][]string{
		"missing site":              {"-group", "orders", "-operator-url", "http://op"},
		"bad duration":              append(base, "-lease-timeout", "soon"),
		"bad peer":                  append(base, "-peers", "http://pdx:8080"),
		"bad dsn":                   append(base, "-mysql-dsn", "no-at-sign("),
		"bad network":               append(base, "-mysql-dsn", "u@pipe(x)/"),
		"bad log format":            append(base, "-log-format", "xml"),
		"stray argument":            append(base, "extra"),
		"unknown flag":              append(base, "-nope"),
		"tls without a health port": append(base, "-tls-dir", "/etc/bloodraven/tls"),
		"no view keys":              append(base, "-view-keys", ""),
		"clone donor without tls":   append(base, "-clone-donor", "true"),
		"negative clone rate":       append(base, "-tls-dir", "/t", "-health-listen", ":9", "-clone-donor", "true", "-max-clone-rate", "-1Mi"),
		"zero clone timeout":        append(base, "-tls-dir", "/t", "-health-listen", ":9", "-clone-donor", "true", "-clone-timeout", "0s"),
		"bad clone-donor":           append(base, "-clone-donor", "maybe"),
	} {
		if _, err := parseOptions(args, env(nil), io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%s: error %v, want errUsage", name, err)
		}
	}
}

func TestParseOptionsProcessEvidence(t *testing.T) {
	base := []string{"-group", "orders", "-site", "iad", "-operator-url", "http://op"}
	for _, tc := range []struct {
		name string
		args []string
		want sidecar.Process
	}{
		{"socket DSN probes the Pod's port", base, sidecar.Process{TCPAddr: "127.0.0.1:3306"}},
		{"tcp DSN probes its own address", append(base, "-mysql-dsn", "u:p@tcp(10.0.0.5:3307)/"),
			sidecar.Process{TCPAddr: "10.0.0.5:3307"}},
		{"explicit pid file and port", append(base, "-mysqld-pid-file", "/var/run/mysqld/mysqld.pid", "-mysqld-tcp", "127.0.0.1:3310"),
			sidecar.Process{PIDFile: "/var/run/mysqld/mysqld.pid", TCPAddr: "127.0.0.1:3310"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, env(nil), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.sidecar.Process != tc.want {
				t.Fatalf("process %+v, want %+v", o.sidecar.Process, tc.want)
			}
		})
	}
}
