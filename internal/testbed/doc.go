// Package testbed starts real servers for the tests and the playground: MariaDB
// instances wired for GTID replication, Redis instances, and (in envtest.go) a
// Kubernetes control plane.
//
// Every server runs on 127.0.0.1 on a port from FreePort, in its own process
// group, with its own files under a directory the caller gives. Teardown goes
// through a Cleaner: testing.TB is one, and Cleanups is one for programs that
// are not tests (the playground). The Start* helpers take a testing.TB, fail
// the test with a message that says how to install a missing server, and
// clean up even after a failed test.
//
// The MariaDB part follows the verified recipe in shared/TESTBED.md: every
// instance boots read_only=ON with gtid_strict_mode, ROW binlogs and
// log_slave_updates; the first instance is made writable and the others
// replicate from it with MASTER_USE_GTID=slave_pos. Setting up accounts and
// wiring the initial replication is test-bed plumbing and is written here as
// plain SQL on purpose: it must not depend on pkg/mysql, whose verbs the
// db-tier tests check against this independent setup.
package testbed
