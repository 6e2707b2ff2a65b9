package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// defaultTCP is where mysqld listens in a site's Pod.
const defaultTCP = "127.0.0.1:3306"

// errUsage marks a command line or environment that cannot start a sidecar.
var errUsage = errors.New("usage")

// options is everything the command line and the environment say.
type options struct {
	sidecar   sidecar.Config
	mysql     mysql.Config
	listen    string
	health    string
	tlsDir    string
	logFormat string
	logLevel  string
	// mysqlTLSDir holds the certificate mysqld serves; "" watches nothing.
	mysqlTLSDir string
	// appLoginUser is the account readiness logs in as; "" checks no login.
	appLoginUser string
	// reclone, when set, turns on the reclone endpoint (reclone.go).
	reclone *recloneOptions
}

// envPrefix starts the name of every environment variable the sidecar reads;
// a flag set on the command line wins over its variable.
const envPrefix = "BLOODRAVEN_"

// flagSpec is one flag and the variable that backs it.
type flagSpec struct {
	name, env, def, usage string
}

var flagSpecs = []flagSpec{
	{"namespace", "NAMESPACE", "", "namespace of the failover group (falls back to $POD_NAMESPACE)"},
	{"group", "GROUP", "", "name of the MysqlFailoverGroup (required)"},
	{"site", "SITE", "", "this sidecar's site (required)"},
	{"mysql-dsn", "MYSQL_DSN", "root@unix(/run/mysqld/mysqld.sock)/", "DSN of the local mysqld, go-sql-driver form; prefer the variable, it may hold a password"},
	{"mysqld-pid-file", "MYSQLD_PID_FILE", "", "mysqld's pid-file; with a shared process namespace it proves mysqld gone and lets a stuck fence SIGKILL it"},
	{"mysqld-tcp", "MYSQLD_TCP", "", "mysqld's local TCP address, probed before reporting it down (empty: the DSN's address when it is tcp, else 127.0.0.1:3306)"},
	{"app-users", "APP_USERS", "", "comma-separated application accounts a fence kills (empty: every account but the system ones)"},
	{"system-users", "SYSTEM_USERS", "", "comma-separated accounts a fence never kills (operator, replication, monitoring)"},
	{"operator-url", "OPERATOR_URL", "", "base URL of the operator's /active-site (required)"},
	{"peers", "PEERS", "", "comma-separated site=URL of the other sites' sidecars, e.g. pdx=http://orders-pdx.shop.svc:8080"},
	{"lease-timeout", "LEASE_TIMEOUT", "20s", "how long mysqld stays writable without any contact"},
	{"peer-check-interval", "PEER_CHECK_INTERVAL", "5s", "period of the fencing loop"},
	{"request-timeout", "REQUEST_TIMEOUT", "0s", "timeout of each GET to the operator or a peer (0: two thirds of the interval)"},
	{"listen", "LISTEN", ":8080", "address of the peer port (HTTPS with -tls-dir; plain HTTP with every endpoint without it)"},
	{"health-listen", "HEALTH_LISTEN", "", "address of the plain-HTTP port of /healthz, /readyz, /status and /metrics (empty: on -listen, only without -tls-dir)"},
	{"tls-dir", "TLS_DIR", "", "folder with tls.crt, tls.key and ca.crt (the site's certificate Secret): turns on the authenticated transport"},
	{"view-keys", "VIEW_KEYS", "/etc/bloodraven/view-keys/keys.pem", "PEM file of the public keys whose signed views are accepted; re-read every tick"},
	{"state-dir", "STATE_DIR", "/var/run/mysqld", "directory that outlives a restart of this container, for the highest generation seen and the active record (empty: none, with a warning)"},
	{"log-format", "LOG_FORMAT", "text", "text or json"},
	{"log-level", "LOG_LEVEL", "info", "debug, info, warn or error"},
	{"clone-donor", "CLONE_DONOR", "false", "serve GET /peer/clone: a mariadb-backup stream of the local mysqld, as the -mysql-dsn account, to the operator or another site of the group only (needs -tls-dir)"},
	{"clone-defaults-file", "CLONE_DEFAULTS_FILE", "", "mysqld's configuration file, given to mariadb-backup (empty: --no-defaults)"},
	{"max-clone-rate", "MAX_CLONE_RATE", "0", "cap of a clone stream in bytes per second, a quantity such as 100Mi (0: unlimited; spec.recovery.maxCloneRate)"},
	{"clone-timeout", "CLONE_TIMEOUT", "6h", "bound of one clone stream (spec.recovery.cloneTimeout)"},
	{"stop-delay", "STOP_DELAY", "30s", "the Pod's termination grace: on SIGTERM mysqld is fenced, drained for half of it, and shut down in the rest"},
	{"start-delay", "START_DELAY", "30s", "how long a mysqld not accepting connections yet (crash recovery) passes /healthz/live"},
	{"app-login-user", "APP_LOGIN_USER", "", "application account /readyz logs in as (empty: no login check); its password is $BLOODRAVEN_APP_LOGIN_PASSWORD"},
	{"reclone-data-dir", "RECLONE_DATA_DIR", "", "mysqld's datadir as this container sees it: turns on POST /sidecar/reclone (needs -tls-dir, -peers and the three below)"},
	{"reclone-preserve-root", "RECLONE_PRESERVE_ROOT", "", "where a reclone moves the earlier datadir; on its file system, outside it (never deleted)"},
	{"reclone-dir", "RECLONE_DIR", "", "a reclone's state and the backup it receives; outside the datadir, ideally on its file system"},
	{"mysqld-hold-file", "MYSQLD_HOLD_FILE", "", "the hold file mysqld's entrypoint honours: while it exists mysqld is not started (a reclone's stop and start)"},
	{"mariadb-backup", "MARIADB_BACKUP", "mariadb-backup", "the mariadb-backup binary (a clone donor's and a reclone's)"},
	{"mbstream", "MBSTREAM", "mbstream", "the mbstream binary (a reclone's)"},
	{"mysql-tls-dir", "MYSQL_TLS_DIR", "", "folder of the site certificate mysqld serves (tls.crt, tls.key, ca.crt); when they change, mysqld reloads them (empty: off)"},
}

// parseOptions reads args (without the program name) over the environment:
// a flag not given on the command line takes its variable, if set, else its
// default. Variables never show in -help, since the DSN may hold a password.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vals := map[string]*string{}
	for _, f := range flagSpecs {
		vals[f.name] = fs.String(f.name, f.def, f.usage+" [$"+envPrefix+f.env+"]")
	}
	if err := fs.Parse(args); err != nil {
		return options{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range flagSpecs {
		if v := getenv(envPrefix + f.env); v != "" && !set[f.name] {
			*vals[f.name] = v
		}
	}
	if *vals["namespace"] == "" {
		*vals["namespace"] = getenv("POD_NAMESPACE")
	}
	return buildOptions(func(name string) string { return strings.TrimSpace(*vals[name]) })
}

func buildOptions(get func(string) string) (options, error) {
	o := options{listen: get("listen"), health: get("health-listen"), tlsDir: get("tls-dir"), mysqlTLSDir: get("mysql-tls-dir"),
		logFormat: get("log-format"), logLevel: get("log-level")}
	var err error
	durs := map[string]*time.Duration{"lease-timeout": &o.sidecar.LeaseTimeout,
		"peer-check-interval": &o.sidecar.PeerCheckInterval, "request-timeout": &o.sidecar.RequestTimeout,
		"stop-delay": &o.sidecar.StopDelay, "start-delay": &o.sidecar.StartDelay}
	for name, d := range durs {
		if *d, err = time.ParseDuration(get(name)); err != nil {
			return o, fmt.Errorf("%w: -%s: %w", errUsage, name, err)
		}
	}
	o.sidecar.Namespace, o.sidecar.Group, o.sidecar.Site = get("namespace"), get("group"), get("site")
	o.sidecar.OperatorURL = get("operator-url")
	o.sidecar.ViewKeysFile, o.sidecar.StateDir = get("view-keys"), get("state-dir")
	if o.sidecar.Peers, err = parsePeers(get("peers")); err != nil {
		return o, err
	}
	if o.mysql, err = mysqlConfig(get("mysql-dsn")); err != nil {
		return o, err
	}
	o.mysql.AppUsers, o.mysql.SystemUsers = splitList(get("app-users")), splitList(get("system-users"))
	o.appLoginUser = get("app-login-user")
	o.sidecar.Process = sidecar.Process{PIDFile: get("mysqld-pid-file"), TCPAddr: get("mysqld-tcp")}
	if o.sidecar.Process.TCPAddr == "" {
		o.sidecar.Process.TCPAddr = defaultTCP
		if o.mysql.Addr != "" {
			o.sidecar.Process.TCPAddr = o.mysql.Addr
		}
	}
	if o.sidecar.Clone, err = cloneDonor(get, o.mysql); err != nil {
		return o, err
	}
	if o.sidecar.Clone != nil {
		o.sidecar.Clone.Backup = get("mariadb-backup")
	}
	if o.reclone, err = parseReclone(get, o.tlsDir, o.sidecar.Peers); err != nil {
		return o, err
	}
	switch {
	case o.sidecar.Clone != nil && o.tlsDir == "":
		return o, fmt.Errorf("%w: -clone-donor needs -tls-dir: a clone is served only to callers that prove who they are", errUsage)
	case o.sidecar.Group == "" || o.sidecar.Site == "" || o.sidecar.OperatorURL == "" || o.sidecar.ViewKeysFile == "":
		return o, fmt.Errorf("%w: -group, -site, -operator-url and -view-keys are required", errUsage)
	case o.tlsDir != "" && o.health == "":
		return o, fmt.Errorf("%w: -tls-dir needs -health-listen: probes and metrics stay in plain HTTP", errUsage)
	case o.logFormat != "text" && o.logFormat != "json":
		return o, fmt.Errorf("%w: -log-format %q: want text or json", errUsage, o.logFormat)
	}
	return o, nil
}

// cloneDonor is the clone donor the flags ask for, nil when off.
func cloneDonor(get func(string) string, mc mysql.Config) (*clone.Donor, error) {
	on, err := strconv.ParseBool(get("clone-donor"))
	if err != nil {
		return nil, fmt.Errorf("%w: -clone-donor: %w", errUsage, err)
	}
	if !on {
		return nil, nil
	}
	rate, err := resource.ParseQuantity(get("max-clone-rate"))
	if err != nil || rate.Sign() < 0 {
		return nil, fmt.Errorf("%w: -max-clone-rate %q: want a quantity of bytes per second, 0 or more", errUsage, get("max-clone-rate"))
	}
	timeout, err := time.ParseDuration(get("clone-timeout"))
	if err != nil || timeout <= 0 {
		return nil, fmt.Errorf("%w: -clone-timeout %q: want a positive duration", errUsage, get("clone-timeout"))
	}
	d := &clone.Donor{DefaultsFile: get("clone-defaults-file"), Socket: mc.Socket, User: mc.User, Password: mc.Password,
		Rate: rate.Value(), Timeout: timeout}
	if mc.Socket == "" {
		host, port, err := net.SplitHostPort(mc.Addr)
		if err != nil {
			return nil, fmt.Errorf("%w: -mysql-dsn address %q: %w", errUsage, mc.Addr, err)
		}
		d.Host = host
		if d.Port, err = strconv.Atoi(port); err != nil {
			return nil, fmt.Errorf("%w: -mysql-dsn port %q: %w", errUsage, port, err)
		}
	}
	return d, nil
}

// parsePeers reads "site=URL,site=URL".
func parsePeers(s string) ([]sidecar.Peer, error) {
	var out []sidecar.Peer
	for _, item := range splitList(s) {
		name, u, ok := strings.Cut(item, "=")
		if !ok || name == "" || u == "" {
			return nil, fmt.Errorf("%w: -peers item %q: want site=URL", errUsage, item)
		}
		out = append(out, sidecar.Peer{Name: strings.TrimSpace(name), URL: strings.TrimSpace(u)})
	}
	return out, nil
}

// mysqlConfig reads a go-sql-driver DSN: user:password@unix(/path)/ or @tcp(host:port)/.
func mysqlConfig(dsn string) (mysql.Config, error) {
	c, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return mysql.Config{}, fmt.Errorf("%w: -mysql-dsn: %w", errUsage, err)
	}
	// Four connections: reads and fences, the write hold, SHUTDOWN, and
	// the liveness check, which must not wait behind the others.
	mc := mysql.Config{User: c.User, Password: c.Passwd, DialTimeout: time.Second, MaxOpenConns: 4}
	switch c.Net {
	case "unix":
		mc.Socket = c.Addr
	case "tcp", "":
		mc.Addr = c.Addr
	default:
		return mc, fmt.Errorf("%w: -mysql-dsn network %q: want unix or tcp", errUsage, c.Net)
	}
	return mc, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
