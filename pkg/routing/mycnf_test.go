package routing

import (
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// effective reads a my.cnf the way mysqld does for the [mysqld] section:
// the last occurrence of an option wins, and '-' and '_' are the same.
func effective(cnf string) map[string]string {
	out := map[string]string{}
	section := ""
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		case section == "mysqld":
			k, v, _ := strings.Cut(line, "=")
			out[strings.ReplaceAll(strings.TrimSpace(k), "-", "_")] = strings.TrimSpace(v)
		}
	}
	return out
}

func TestRenderMyCnf(t *testing.T) {
	cases := []struct {
		name   string
		flavor v1alpha1.Flavor
		site   string
		user   string
		tls    v1alpha1.MySQLTLSSpec
		want   map[string]string
		absent []string
	}{
		{
			name: "mariadb boots fenced with strict GTID and ROW binlogs", flavor: v1alpha1.FlavorMariaDB, site: "iad",
			want: map[string]string{
				"read_only": "ON", "gtid_strict_mode": "ON", "gtid_domain_id": "0", "log_slave_updates": "ON",
				"binlog_format": "ROW", "log_bin": "binlog", "relay_log": "relay-bin", "skip_name_resolve": "ON",
				"user": "root", "bind_address": "0.0.0.0", "socket": SocketPath, "datadir": DataDir,
				"init_file": InitFile, "port": "3306", "server_id": iadServerID, "event_scheduler": "ON",
			},
			absent: []string{"super_read_only", "gtid_mode", "plugin_load_add"},
		},
		{
			name: "mysql adds super_read_only and gtid_mode", flavor: v1alpha1.FlavorMySQL, site: "pdx",
			want: map[string]string{
				"read_only": "ON", "super_read_only": "ON", "gtid_mode": "ON", "enforce_gtid_consistency": "ON",
				"log_replica_updates": "ON", "binlog_format": "ROW", "log_bin": "binlog",
				"plugin_load_add": "semisync_source.so;semisync_replica.so",
			},
			absent: []string{"gtid_strict_mode", "gtid_domain_id"},
		},
		{
			name: "user config is kept but cannot unfence or change identity", flavor: v1alpha1.FlavorMariaDB, site: "iad",
			user: "max_connections=500\nread-only=OFF\nserver_id=7\nbinlog_format=MIXED\nbind-address=127.0.0.1",
			want: map[string]string{
				"max_connections": "500", "read_only": "ON", "server_id": iadServerID,
				"binlog_format": "ROW", "bind_address": "127.0.0.1",
			},
		},
		{
			name: "user config cannot turn off durability or crash-safe relay logs", flavor: v1alpha1.FlavorMariaDB, site: "iad",
			user: "sync_binlog=0\ninnodb_flush_log_at_trx_commit=2\nrelay_log_recovery=OFF\ninnodb-flush-log-at-trx-commit=0",
			want: map[string]string{"sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1", "relay_log_recovery": "ON"},
		},
		{
			name: "mysql is durable and crash-safe too", flavor: v1alpha1.FlavorMySQL, site: "pdx",
			user: "sync_binlog=100\ninnodb_flush_log_at_trx_commit=0\nrelay_log_recovery=0",
			want: map[string]string{"sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1", "relay_log_recovery": "ON"},
			// Removed in MySQL 8.3 (8.0's default is TABLE, which is crash-safe):
			// naming it would stop 8.4 and 9.x from starting.
			absent: []string{"relay_log_info_repository", "master_info_repository"},
		},
		{
			name: "a section header in user config does not swallow the enforced settings", flavor: v1alpha1.FlavorMariaDB,
			site: "fra", user: "[client]\ndefault-character-set=utf8mb4",
			want: map[string]string{"read_only": "ON", "gtid_strict_mode": "ON"},
		},
		{
			name: "TLS from the mounted site certificate; plain clients allowed by default", flavor: v1alpha1.FlavorMariaDB,
			site: "iad", user: "ssl_cert=/elsewhere.pem",
			want: map[string]string{
				"ssl_ca": SiteTLSDir + "/ca.crt", "ssl_cert": SiteTLSDir + "/tls.crt", "ssl_key": SiteTLSDir + "/tls.key",
			},
			absent: []string{"require_secure_transport"},
		},
		{
			name: "spec.mysql.tls requires secure transport on mysql", flavor: v1alpha1.FlavorMySQL, site: "pdx",
			tls:  v1alpha1.MySQLTLSSpec{RequireSecureTransport: true},
			want: map[string]string{"require_secure_transport": "ON", "ssl_cert": SiteTLSDir + "/tls.crt"},
		},
		{
			name: "a user's own require_secure_transport is not turned off", flavor: v1alpha1.FlavorMariaDB, site: "iad",
			user: "require_secure_transport=ON",
			want: map[string]string{"require_secure_transport": "ON"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := effective(RenderMyCnf(tc.flavor, tc.site, tc.user, tc.tls))
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is set (%q), want absent", k, got[k])
				}
			}
		})
	}
}

func TestServerIDStableAndDistinct(t *testing.T) {
	sites := []string{"iad", "pdx", "fra", "a", "b", "c", "site-1", "site-2", "site-10", "us-east-1a", "us-east-1b"}
	seen := map[uint32]string{}
	for _, s := range sites {
		id := ServerID(s)
		if id == 0 {
			t.Errorf("ServerID(%q) = 0: mysqld refuses replication with server_id 0", s)
		}
		if id != ServerID(s) {
			t.Errorf("ServerID(%q) is not stable", s)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("ServerID(%q) = ServerID(%q) = %d", s, other, id)
		}
		seen[id] = s
	}
}

func TestConfigFlavor(t *testing.T) {
	cases := []struct {
		name  string
		spec  v1alpha1.Flavor
		image string
		want  v1alpha1.Flavor
	}{
		{"default mariadb image", v1alpha1.FlavorAuto, "mariadb:10.11", v1alpha1.FlavorMariaDB},
		{"official mysql image", v1alpha1.FlavorAuto, "mysql:8.4", v1alpha1.FlavorMySQL},
		{"oracle registry", v1alpha1.FlavorAuto, "container-registry.oracle.com/mysql/community-server:9.1", v1alpha1.FlavorMySQL},
		{"registry port is not a tag", v1alpha1.FlavorAuto, "registry:5000/mariadb", v1alpha1.FlavorMariaDB},
		{"mariadb under a mysql folder", v1alpha1.FlavorAuto, "ghcr.io/mysql-mirror/mariadb:11", v1alpha1.FlavorMariaDB},
		{"unknown image falls back to mariadb", v1alpha1.FlavorAuto, "example.com/db:1", v1alpha1.FlavorMariaDB},
		{"explicit flavor wins over the image", v1alpha1.FlavorMySQL, "mariadb:10.11", v1alpha1.FlavorMySQL},
		{"empty flavor is auto", "", "percona/mysql:8", v1alpha1.FlavorMySQL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConfigFlavor(v1alpha1.MySQLSpec{Flavor: tc.spec}, tc.image); got != tc.want {
				t.Errorf("ConfigFlavor(%q, %q) = %q, want %q", tc.spec, tc.image, got, tc.want)
			}
		})
	}
}

// iadServerID is ServerID("iad") as released: it must never change, or every
// running server would get a new identity on its next restart.
const iadServerID = "2816265922"
