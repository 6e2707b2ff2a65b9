package standin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gm "github.com/go-mysql-org/go-mysql/mysql"
)

// The statements the operator's status probe sends to a MariaDB server
// (pkg/mysql), word for word once whitespace is folded. A test runs the
// real probe against a stand-in and fails on any other.
const (
	versionQuery = "SELECT @@version AS version"
	statusQuery  = "SELECT @@version AS version, @@global.server_id AS server_id, " +
		"@@global.read_only AS read_only, @@global.gtid_binlog_state AS gtid_binlog_state, " +
		"@@global.gtid_binlog_pos AS gtid_binlog_pos, @@global.gtid_slave_pos AS gtid_slave_pos, " +
		"@@global.gtid_current_pos AS gtid_current_pos, " +
		"@@global.rpl_semi_sync_master_enabled AS rpl_semi_sync_master_enabled, " +
		"@@global.rpl_semi_sync_slave_enabled AS rpl_semi_sync_slave_enabled"
	replicaStatusQuery = "SHOW REPLICA STATUS"
	semiSyncQuery      = "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync_master_%' OR Variable_name = 'Uptime'"
	readOnlyQuery      = "SELECT @@global.read_only AS read_only"
)

// answer is one known statement's reply.
type answer func(s *MySQL, st state) (*gm.Result, error)

var answers = map[string]answer{
	normalize(versionQuery): func(*MySQL, state) (*gm.Result, error) {
		return rows([]string{"version"}, []any{Version})
	},
	normalize(statusQuery): func(s *MySQL, st state) (*gm.Result, error) {
		pos := st.pos(s.cfg.Domain)
		slave := ""
		if st.source != "" {
			slave = pos
		}
		return rows([]string{"version", "server_id", "read_only", "gtid_binlog_state", "gtid_binlog_pos",
			"gtid_slave_pos", "gtid_current_pos", "rpl_semi_sync_master_enabled", "rpl_semi_sync_slave_enabled"},
			[]any{Version, int64(s.cfg.ServerID), boolInt(st.readOnly), pos, pos, slave, pos, int64(0), int64(0)})
	},
	normalize(readOnlyQuery): func(_ *MySQL, st state) (*gm.Result, error) {
		return rows([]string{"read_only"}, []any{boolInt(st.readOnly)})
	},
	normalize(semiSyncQuery): func(s *MySQL, _ state) (*gm.Result, error) {
		return rows([]string{"Variable_name", "Value"}, []any{"Rpl_semi_sync_master_clients", "0"},
			[]any{"Rpl_semi_sync_master_status", "OFF"},
			[]any{"Uptime", strconv.Itoa(int(time.Since(s.started).Seconds()))})
	},
	normalize(replicaStatusQuery): replicaStatus,
}

// replicaColumns are the SHOW REPLICA STATUS columns the probe reads.
var replicaColumns = []string{"Connection_name", "Slave_IO_State", "Master_Host", "Master_User", "Master_Port",
	"Slave_IO_Running", "Slave_SQL_Running", "Last_IO_Errno", "Last_IO_Error", "Last_SQL_Errno", "Last_SQL_Error",
	"Seconds_Behind_Master", "Master_SSL_Allowed", "Master_SSL_CA_File", "Master_SSL_Cert", "Master_SSL_Key",
	"Master_SSL_Verify_Server_Cert", "Using_Gtid",
	"Gtid_IO_Pos", "Gtid_Slave_Pos"}

func replicaStatus(s *MySQL, st state) (*gm.Result, error) {
	if st.source == "" {
		return rows(replicaColumns)
	}
	host, port, _ := strings.Cut(st.source, ":")
	p, _ := strconv.Atoi(port)
	pos := st.pos(s.cfg.Domain)
	t := st.tls
	return rows(replicaColumns, []any{"", "Waiting for master to send event", host, "repl", int64(p), "Yes", "Yes",
		int64(0), "", int64(0), "", int64(0), yesNo(t.CAFile != ""), t.CAFile, t.CertFile, t.KeyFile, yesNo(t.Verify),
		"Current_Pos", pos, pos})
}

func rows(names []string, values ...[]any) (*gm.Result, error) {
	rs, err := gm.BuildSimpleTextResultset(names, values)
	if err != nil {
		return nil, fmt.Errorf("stand-in result: %w", err)
	}
	return &gm.Result{Resultset: rs}, nil
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// handler answers one session's commands.
type handler struct{ s *MySQL }

func (h handler) UseDB(string) error { return nil }

func (h handler) HandleQuery(q string) (*gm.Result, error) {
	h.s.wait()
	key := normalize(q)
	a, ok := answers[key]
	if !ok {
		h.s.mu.Lock()
		h.s.unknown = append(h.s.unknown, key)
		h.s.mu.Unlock()
		return nil, gm.NewError(gm.ER_PARSE_ERROR, "stand-in does not know: "+key)
	}
	h.s.mu.Lock()
	h.s.served[key]++
	h.s.mu.Unlock()
	return a(h.s, h.s.read())
}

func (h handler) HandleFieldList(string, string) ([]*gm.Field, error) {
	return nil, gm.NewError(gm.ER_UNKNOWN_ERROR, "stand-in: no field lists")
}

func (h handler) HandleStmtPrepare(q string) (int, int, interface{}, error) {
	h.s.mu.Lock()
	h.s.unknown = append(h.s.unknown, "PREPARE "+normalize(q))
	h.s.mu.Unlock()
	return 0, 0, nil, gm.NewError(gm.ER_UNKNOWN_ERROR, "stand-in: no prepared statements")
}

func (h handler) HandleStmtExecute(interface{}, string, []interface{}) (*gm.Result, error) {
	return nil, gm.NewError(gm.ER_UNKNOWN_ERROR, "stand-in: no prepared statements")
}

func (h handler) HandleStmtClose(interface{}) error { return nil }

func (h handler) HandleOtherCommand(cmd byte, _ []byte) error {
	return gm.NewError(gm.ER_UNKNOWN_ERROR, fmt.Sprintf("stand-in: command %d", cmd))
}
