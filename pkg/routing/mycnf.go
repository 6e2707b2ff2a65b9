package routing

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ConfigFlavor resolves the flavor my.cnf and the init SQL are written for.
// An explicit spec.mysql.flavor wins; auto looks at the image: a repository
// whose name mentions mysql but not mariadb (mysql:8.4,
// container-registry.oracle.com/mysql/community-server) is MySQL, anything
// else (the default mariadb:10.11 included) is MariaDB. The operator still
// reads @@version at run time; this only picks the boot configuration.
func ConfigFlavor(spec v1alpha1.MySQLSpec, image string) v1alpha1.Flavor {
	if spec.Flavor == v1alpha1.FlavorMySQL || spec.Flavor == v1alpha1.FlavorMariaDB {
		return spec.Flavor
	}
	repo := strings.ToLower(image)
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if strings.Contains(repo, "mysql") && !strings.Contains(repo, "mariadb") {
		return v1alpha1.FlavorMySQL
	}
	return v1alpha1.FlavorMariaDB
}

// cnfPaths are the files and folders my.cnf points at. Pods use podPaths; the
// real-database test points them at a temporary folder.
type cnfPaths struct {
	DataDir, Socket, PIDFile, InitFile string
	Port                               int
	TLS                                TLSFiles
}

var podPaths = cnfPaths{
	DataDir:  DataDir,
	Socket:   SocketPath,
	PIDFile:  RunDir + "/mysqld.pid",
	InitFile: InitFile,
	Port:     MySQLPort,
	TLS:      PodTLSFiles,
}

// RenderMyCnf renders a site's my.cnf. It has three parts, in this order:
//  1. defaults the user may override (bind-address, skip_name_resolve, user);
//  2. spec.mysql.config, verbatim;
//  3. a fresh [mysqld] header and the settings Bloodraven depends on (paths,
//     server_id, read_only, binlog and GTID settings, then TLS). In my.cnf
//     the last occurrence of an option wins, so these always win over part 2.
//
// RenderMyCnf always writes the TLS lines; a Router writes them only when
// the authenticated transport is on (cnfPaths), since mysqld will not start
// without the files they name.
func RenderMyCnf(flavor v1alpha1.Flavor, site, userConfig string, tls v1alpha1.MySQLTLSSpec) string {
	return renderMyCnf(flavor, site, userConfig, tls, podPaths)
}

func renderMyCnf(flavor v1alpha1.Flavor, site, userConfig string, tls v1alpha1.MySQLTLSSpec, p cnfPaths) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Rendered by Bloodraven for site %s. Edit spec.mysql.config instead.\n", site)
	fmt.Fprintf(&b, "[client]\nsocket=%s\n\n", p.Socket)
	b.WriteString("[mysqld]\nuser=root\nbind-address=0.0.0.0\nskip_name_resolve=ON\n")
	if c := strings.TrimSpace(userConfig); c != "" {
		b.WriteString("\n# spec.mysql.config\n")
		b.WriteString(c)
		b.WriteString("\n")
	}
	b.WriteString("\n# Bloodraven's settings come last so that they win.\n[mysqld]\n")
	fmt.Fprintf(&b, "datadir=%s\nsocket=%s\npid-file=%s\nport=%d\ninit_file=%s\n",
		p.DataDir, p.Socket, p.PIDFile, p.Port, p.InitFile)
	for _, l := range EnforcedSettings(flavor, site) {
		b.WriteString(l)
		b.WriteString("\n")
	}
	// TLS: the site's certificate from the operator's CA (see tls.go).
	if p.TLS != (TLSFiles{}) {
		for _, l := range TLSSettings(p.TLS, tls) {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// EnforcedSettings are the [mysqld] lines every site gets regardless of
// spec.mysql.config: a stable server_id, boot fenced (read_only=ON, and
// super_read_only=ON on MySQL), ROW binlogs that replicas also write, and
// GTID replication (gtid_strict_mode with domain 0 on MariaDB, gtid_mode and
// enforce_gtid_consistency on MySQL). Log names do not depend on the Pod's
// host name, which changes on every restart.
//
// Every commit is durable before it is acknowledged (sync_binlog=1,
// innodb_flush_log_at_trx_commit=1): a primary that loses power must not come
// back without transactions a replica already received, or re-asserting it
// would hand out their GTIDs again. Relay logs are crash-safe: after a crash
// a replica discards its relay log and fetches again from the position its
// transactional GTID state holds (relay_log_recovery; MySQL 8.0 keeps that
// state in tables by default, and 8.3 removed the options to keep it in
// files, so naming relay_log_info_repository would stop 8.4 from starting).
// The event scheduler runs (MariaDB's default is off): the sidecar's lease
// fence is an event that fences mysqld if the sidecar stops pushing it.
// MySQL loads the semi-sync plugins (MariaDB has them built in), so that
// semi-sync can be turned on and off at run time (pkg/mysql
// ConfigureSemiSync) without a restart.
func EnforcedSettings(flavor v1alpha1.Flavor, site string) []string {
	lines := []string{
		fmt.Sprintf("server_id=%d", ServerID(site)),
		"read_only=ON",
		"log_bin=binlog",
		"relay_log=relay-bin",
		"binlog_format=ROW",
		"sync_binlog=1",
		"innodb_flush_log_at_trx_commit=1",
		"relay_log_recovery=ON",
		// The sidecar's lease fence is an event (pkg/mysql ArmLeaseFence).
		"event_scheduler=ON",
	}
	if flavor == v1alpha1.FlavorMySQL {
		return append(lines,
			"super_read_only=ON",
			"log_replica_updates=ON",
			"gtid_mode=ON",
			"enforce_gtid_consistency=ON",
			"plugin_load_add=semisync_source.so;semisync_replica.so",
		)
	}
	return append(lines,
		"log_slave_updates=ON",
		"gtid_strict_mode=ON",
		"gtid_domain_id=0",
	)
}

// cnfPaths are the Pod's paths, without TLS files when the authenticated
// transport is off (no certificate Secret is mounted then).
func (r *Router) cnfPaths() cnfPaths {
	p := podPaths
	if r.recloneOn() {
		p.DataDir = RecloneDataDir
	}
	if !r.tlsEnabled() {
		p.TLS = TLSFiles{}
	}
	return p
}
