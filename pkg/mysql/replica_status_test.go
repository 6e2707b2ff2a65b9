package mysql

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

func rowOf(pairs ...string) row {
	r := row{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		r[k] = sql.NullString{String: v, Valid: v != "NULL"}
	}
	return r
}

func TestParseReplicaStatusMySQL84(t *testing.T) {
	rs := parseReplicaStatus(rowOf(mysqlReplicaRow...))
	want := ReplicaStatus{
		SourceHost: "db-a", SourcePort: 3306, SourceUser: "repl", IORunning: ThreadYes, SQLRunning: true,
		IOState: "Waiting for source to send event", SecondsBehind: 0,
		Retrieved: uuidA + ":1-10", Applied: uuidA + ":1-10," + uuidB + ":1-2", AutoPosition: true,
	}
	if rs != want {
		t.Fatalf("got  %+v\nwant %+v", rs, want)
	}
	if !rs.Healthy() || rs.Err() != nil {
		t.Fatalf("healthy row: Healthy=%v Err=%v", rs.Healthy(), rs.Err())
	}
}

// A MariaDB 10.11 row (SHOW REPLICA STATUS keeps the Slave_* names).
var mariadbReplicaRow = []string{
	"Slave_IO_State=Waiting for master to send event", "Master_Host=127.0.0.1", "Master_User=repl",
	"Master_Port=29165", "Connect_Retry=1", "Slave_IO_Running=Yes", "Slave_SQL_Running=No",
	"Last_Errno=1950", "Last_IO_Errno=0", "Last_IO_Error=", "Last_SQL_Errno=1950",
	"Last_SQL_Error=An attempt was made to binlog GTID 0-1-3 which would create an out-of-order sequence number with existing GTID 0-2-3, and gtid strict mode is enabled",
	"Seconds_Behind_Master=NULL", "Using_Gtid=Current_Pos", "Gtid_IO_Pos=0-1-3", "Gtid_Slave_Pos=0-1-2",
	"Connection_name=",
}

func TestParseReplicaStatusMariaDB(t *testing.T) {
	rs := parseReplicaStatus(rowOf(mariadbReplicaRow...))
	if rs.SourceHost != "127.0.0.1" || rs.SourcePort != 29165 || rs.SourceUser != "repl" ||
		rs.IORunning != ThreadYes || rs.SQLRunning || rs.SecondsBehind != -1 ||
		rs.Retrieved != "0-1-3" || rs.Applied != "0-1-2" || rs.UsingGTID != "Current_Pos" ||
		!rs.AutoPosition || rs.LastSQLErrno != 1950 {
		t.Fatalf("parsed %+v", rs)
	}
	err := rs.Err()
	if !errors.Is(err, ErrReplicationBroken) || !errors.Is(err, ErrDiverged) || rs.Healthy() {
		t.Fatalf("1950: Err=%v Healthy=%v", err, rs.Healthy())
	}
}

func TestReplicaStatusErr(t *testing.T) {
	tests := []struct {
		name              string
		rs                ReplicaStatus
		broken, divergent bool
	}{
		{"healthy", ReplicaStatus{IORunning: ThreadYes, SQLRunning: true}, false, false},
		{"stopped on purpose", ReplicaStatus{IORunning: ThreadNo}, false, false},
		{"source down, retrying", ReplicaStatus{IORunning: ThreadConnecting, SQLRunning: true,
			LastIOErrno: 2003, LastIOError: "error reconnecting to master"}, false, false},
		{"diverged reconnect", ReplicaStatus{IORunning: ThreadNo, SQLRunning: true, LastIOErrno: 1236,
			LastIOError: "... it probably means that the slave has diverged due to executing extra erroneous transactions"},
			true, true},
		{"purged binlogs", ReplicaStatus{IORunning: ThreadNo, SQLRunning: true, LastIOErrno: 1236,
			LastIOError: "Could not find GTID state requested by slave in any binlog files"}, true, false},
		{"duplicate key", ReplicaStatus{IORunning: ThreadYes, LastSQLErrno: 1062, LastSQLError: "Duplicate entry"}, true, false},
	}
	for _, tc := range tests {
		err := tc.rs.Err()
		if errors.Is(err, ErrReplicationBroken) != tc.broken || errors.Is(err, ErrDiverged) != tc.divergent {
			t.Errorf("%s: Err() = %v, want broken=%v diverged=%v", tc.name, err, tc.broken, tc.divergent)
		}
	}
}

func TestPickChannelPrefersDefault(t *testing.T) {
	rows := []row{rowOf("Channel_Name=analytics", "Source_Host=x"), rowOf("Channel_Name=", "Source_Host=y")}
	if got := pickChannel(rows).str("Source_Host"); got != "y" {
		t.Fatalf("picked %q, want the default channel", got)
	}
	if pickChannel(nil) != nil {
		t.Fatal("no rows must give nil")
	}
}

func TestDetectFlavor(t *testing.T) {
	tests := []struct {
		version string
		want    string
		err     error
	}{
		{"10.11.19-MariaDB-0+deb12u1-log", "mariadb", nil},
		{"11.4.2-MariaDB", "mariadb", nil},
		{"10.6.18-MariaDB", "", ErrUnsupportedVersion},
		{"8.0.23", "mysql", nil},
		{"8.0.22", "", ErrUnsupportedVersion},
		{"8.4.3", "mysql", nil},
		{"9.1.0-commercial", "mysql", nil},
		{"8.0.36-28", "mysql", nil},
		{"5.7.44-log", "", ErrUnsupportedVersion},
		{"garbage", "", ErrUnsupportedVersion},
	}
	for _, tc := range tests {
		got, err := detectFlavor(tc.version)
		if string(got) != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%q: got %q, %v; want %q, %v", tc.version, got, err, tc.want, tc.err)
		}
	}
}

func TestIsApp(t *testing.T) {
	cfg := Config{User: "bloodraven", SystemUsers: []string{"repl", "monitor"}}
	tests := []struct {
		s    session
		want bool
	}{
		{session{User: "app", Command: "Query"}, true},
		{session{User: "app", Command: "Sleep"}, true},
		{session{User: "bloodraven", Command: "Query"}, false},
		{session{User: "repl", Command: "Binlog Dump GTID"}, false},
		{session{User: "other", Command: "Binlog Dump"}, false},
		{session{User: "system user", Command: "Slave_SQL"}, false},
		{session{User: "system user", Command: "Connect"}, false},
		{session{User: "event_scheduler", Command: "Daemon"}, false},
		{session{User: "unauthenticated user", Command: "Connect"}, false},
		{session{User: "monitor", Command: "Sleep"}, false},
		{session{User: "app", Command: "Killed"}, false},
	}
	for _, tc := range tests {
		if got := isApp(tc.s, cfg); got != tc.want {
			t.Errorf("%+v: isApp = %v, want %v", tc.s, got, tc.want)
		}
	}
	only := Config{User: "bloodraven", AppUsers: []string{"app"}}
	if isApp(session{User: "reporting", Command: "Sleep"}, only) || !isApp(session{User: "app"}, only) {
		t.Error("AppUsers must limit the kills to those accounts")
	}
}

func TestWrapMarksTransportFailures(t *testing.T) {
	err := wrap("fence", "db:3306", errors.New("dial tcp db:3306: i/o timeout"))
	if errors.Is(err, ErrUnreachable) {
		t.Fatal("a plain error is not a transport failure")
	}
	err = wrap("fence", "db:3306", context.DeadlineExceeded)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) || err.Error() != "fence db:3306: server unreachable: context deadline exceeded" {
		t.Fatalf("deadline: %v", err)
	}
	err = wrap("status", "db:3306", &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("dial error: %v", err)
	}
	err = wrap("fence", "db:3306", &gomysql.MySQLError{Number: 1227, Message: "Access denied"})
	if errors.Is(err, ErrUnreachable) || serverErrno(err) != 1227 {
		t.Fatalf("server error: %v", err)
	}
	if wrap("x", "y", nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

// TestRetrievedSetMySQL8: MySQL 8's SHOW REPLICA STATUS prints a
// Retrieved_Gtid_Set of several uuids over several lines; it reads as the
// set it names (MySQL 8 is not installable here, so its row is written out).
func TestRetrievedSetMySQL8(t *testing.T) {
	row := append(slices.Clone(mysqlReplicaRow[:11]),
		"Retrieved_Gtid_Set="+uuidA+":1-12,\n"+uuidB+":1-3", "Executed_Gtid_Set="+uuidA+":1-10,\n"+uuidB+":1-2")
	rs := parseReplicaStatus(rowOf(row...))
	got, err := rs.RetrievedSet(v1alpha1.FlavorMySQL)
	if err != nil || !got.Equal(gtid.MustParseSet(uuidA+":1-12,"+uuidB+":1-3")) {
		t.Fatalf("retrieved %s, %v", got, err)
	}
}

func TestRetrievedSet(t *testing.T) {
	tests := []struct {
		name, retrieved string
		flavor          v1alpha1.Flavor
		want            string
		bad             bool
	}{
		{"mysql nothing received", "", v1alpha1.FlavorMySQL, "", false},
		{"mysql set", uuidA + ":1-5:7", v1alpha1.FlavorMySQL, uuidA + ":1-5:7", false},
		{"mariadb nothing received", "", v1alpha1.FlavorMariaDB, "", false},
		{"mariadb one GTID per domain", "0-2-105,1-3-7", v1alpha1.FlavorMariaDB, "0-2:105,1-3:7", false},
		{"mariadb a MySQL set is refused", uuidA + ":1-5", v1alpha1.FlavorMariaDB, "", true},
		{"mariadb two positions in one domain are refused", "0-1-5,0-2-6", v1alpha1.FlavorMariaDB, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplicaStatus{Retrieved: tc.retrieved}.RetrievedSet(tc.flavor)
			if (err != nil) != tc.bad || !tc.bad && !got.Equal(gtid.MustParseSet(tc.want)) {
				t.Fatalf("got %s, %v", got, err)
			}
		})
	}
}
