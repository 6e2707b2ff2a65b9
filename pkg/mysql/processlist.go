package mysql

import (
	"slices"
	"strings"
)

// serverThreadUsers are processlist users that are the server itself.
var serverThreadUsers = []string{"system user", "event_scheduler", "unauthenticated user", ""}

// replicationCommands are processlist commands of replication and server
// threads, lowercased: binlog dump threads serving replicas, a replica's
// IO/SQL/worker threads, and daemons.
var replicationCommands = []string{
	"binlog dump", "binlog dump gtid", "slave_io", "slave_sql", "slave_worker",
	"daemon", "connect", "register slave",
}

// killedCommand is the processlist command of a session already killed and
// on its way out: KILL CONNECTION returns before the thread is gone, and such
// a session can run nothing more, so it is neither killed nor counted again.
const killedCommand = "killed"

// isApp tells whether KillAppConnections may kill a session: never a server
// or replication thread, a session already killed, the operator's account or
// a configured system account; when AppUsers is set, only those accounts.
func isApp(s session, cfg Config) bool {
	switch {
	case strings.EqualFold(s.Command, killedCommand),
		slices.Contains(serverThreadUsers, s.User),
		slices.Contains(replicationCommands, strings.ToLower(s.Command)),
		s.User == cfg.User,
		slices.Contains(cfg.SystemUsers, s.User):
		return false
	case len(cfg.AppUsers) > 0:
		return slices.Contains(cfg.AppUsers, s.User)
	}
	return true
}
