// Package gtid owns Bloodraven's GTID algebra. It is pure: no I/O, no SQL, no
// clocks, and nothing beyond the standard library.
//
// MySQL: a Set is the executed-transactions set as MySQL prints it in
// @@gtid_executed ("uuid:1-5:7-9,uuid2:3", and the MySQL 8.3+ tagged form
// "uuid:1-5:tag:1-3"). Sets support union, subtraction, containment, counting
// and the Compare relation that failover decisions use (freshest site is the
// superset; a replica's Errant set is what the source never had).
//
// MariaDB: GTIDs are domain-server-seq triples. Pos is one GTID per domain
// (@@gtid_binlog_pos, @@gtid_slave_pos, @@gtid_current_pos) and is what
// MASTER_GTID_WAIT takes; BinlogState is @@gtid_binlog_state, the last seq per
// (domain, server). BinlogState.Set turns MariaDB state into a Set whose source
// ids are "<domain>-<server>", so the same algebra serves both flavors.
// PosFromSet goes back from such a Set to a Pos. MariaDBErrant finds local
// writes on a replica; BinlogErrant compares two servers' binlog states.
//
// Every parser returns an error wrapping ErrSyntax (a *SyntaxError naming the
// offending token and its byte offset) on bad input and never panics.
// Values of every type here are immutable once built: operations return new
// values and never modify their operands.
package gtid
