// Package standin holds test tooling that stands in for servers where a
// real one would cost too much: a MySQL-protocol server that answers the
// statements the operator's status probe sends, for benches that run the
// real operator against many groups (issue 21). It is built on
// go-mysql-org/go-mysql's server package; nothing in the product imports
// it.
//
// A stand-in keeps one MariaDB-style GTID position that advances as writes
// would, replicates (in name) from another stand-in, and can go down, hang
// or turn writable on command. Every statement it does not know is
// answered with an error and recorded, so a test fails when the operator
// starts to send one: a bench must not silently measure less work.
package standin
