package mysql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// parseReplicaStatus reads one SHOW REPLICA STATUS row in MySQL 8.0.22+
// naming (Replica_IO_Running, Source_Host, Seconds_Behind_Source, ...) or
// MariaDB's (Slave_IO_Running, Master_Host, Seconds_Behind_Master, ...).
func parseReplicaStatus(r row) ReplicaStatus {
	atoi := func(cols ...string) int {
		n, _ := strconv.Atoi(strings.TrimSpace(r.pick(cols...).String))
		return n
	}
	rs := ReplicaStatus{
		SourceHost:    r.pick("Source_Host", "Master_Host").String,
		SourcePort:    atoi("Source_Port", "Master_Port"),
		SourceUser:    r.pick("Source_User", "Master_User").String,
		IORunning:     r.pick("Replica_IO_Running", "Slave_IO_Running").String,
		SQLRunning:    parseBool(r.pick("Replica_SQL_Running", "Slave_SQL_Running").String),
		IOState:       r.pick("Replica_IO_State", "Slave_IO_State").String,
		LastIOErrno:   atoi("Last_IO_Errno"),
		LastIOError:   r.str("Last_IO_Error"),
		LastSQLErrno:  atoi("Last_SQL_Errno"),
		LastSQLError:  r.str("Last_SQL_Error"),
		SecondsBehind: -1,
		Retrieved:     compactGTIDs(r.pick("Retrieved_Gtid_Set", "Gtid_IO_Pos").String),
		Applied:       compactGTIDs(r.pick("Executed_Gtid_Set", "Gtid_Slave_Pos").String),
		UsingGTID:     r.str("Using_Gtid"),
		Channel:       r.pick("Channel_Name", "Connection_name").String,
	}
	if sb := r.pick("Seconds_Behind_Source", "Seconds_Behind_Master"); sb.Valid {
		if n, err := strconv.ParseInt(strings.TrimSpace(sb.String), 10, 64); err == nil {
			rs.SecondsBehind = n
		}
	}
	rs.AutoPosition = r.str("Auto_Position") == "1" || (rs.UsingGTID != "" && rs.UsingGTID != "No")
	rs.SSLAllowed = r.pick("Source_SSL_Allowed", "Master_SSL_Allowed").String == "Yes"
	rs.SSLCAFile = r.pick("Source_SSL_CA_File", "Master_SSL_CA_File").String
	rs.SSLCertFile = r.pick("Source_SSL_Cert", "Master_SSL_Cert").String
	rs.SSLKeyFile = r.pick("Source_SSL_Key", "Master_SSL_Key").String
	rs.SSLVerifyServerCert = parseBool(r.pick("Source_SSL_Verify_Server_Cert", "Master_SSL_Verify_Server_Cert").String)
	return rs
}

// pickChannel returns the default channel's row (MySQL lists one row per
// channel), or the first row; nil when there are none.
func pickChannel(rows []row) row {
	for _, r := range rows {
		if r.pick("Channel_Name", "Connection_name").String == "" {
			return r
		}
	}
	if len(rows) > 0 {
		return rows[0]
	}
	return nil
}

// compactGTIDs drops the newlines MySQL puts into long GTID sets.
func compactGTIDs(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// RetrievedSet is Retrieved as a GTID set: MySQL's Retrieved_Gtid_Set as
// it is, MariaDB's Gtid_IO_Pos as the one GTID each domain's IO thread
// reached (which the executed set covers once it is applied: gtid.Cover).
// Empty when nothing was received.
func (r ReplicaStatus) RetrievedSet(flavor v1alpha1.Flavor) (gtid.Set, error) {
	if flavor == v1alpha1.FlavorMySQL || r.Retrieved == "" {
		return gtid.ParseSet(r.Retrieved)
	}
	pos, err := gtid.ParsePos(r.Retrieved)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("gtid_io_pos %q: %w", r.Retrieved, err)
	}
	var out gtid.Set
	for _, g := range pos {
		if g.Seq == 0 {
			continue
		}
		one, err := gtid.ParseSet(fmt.Sprintf("%d-%d:%d", g.Domain, g.Server, g.Seq))
		if err != nil {
			return gtid.Set{}, fmt.Errorf("gtid_io_pos %q: %w", r.Retrieved, err)
		}
		out = out.Union(one)
	}
	return out, nil
}
