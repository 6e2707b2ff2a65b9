// Package dragonfly speaks to the cache that follows a failover group's MySQL
// primary: Dragonfly in production, Redis 7 wherever the protocols agree
// (tests, the playground). One Node type covers both; its flavor is read
// once from INFO server (dragonfly_version versus redis_version), and the
// verbs that differ choose their statement from it:
//
//   - Replication reads INFO replication: role, master_repl_offset,
//     slave_repl_offset, master_link_status, and whether a replica is in
//     stable sync (past its full sync, link up).
//   - ReplicaOf and ReplicaOfNoOne are the same statement on both.
//   - Takeover moves the master role to a replica without losing what the
//     replica has not yet received. Dragonfly: REPLTAKEOVER <seconds> sent
//     to the replica, which returns when the old master has handed over
//     (the old master then shuts itself down outside cluster mode).
//     Redis: FAILOVER TO <host> <port> TIMEOUT <ms> sent to the master,
//     which answers at once; Takeover then polls until the replica is the
//     master or the attempt was aborted.
//   - KillNormalClients is CLIENT KILL TYPE normal, best effort.
//
// Every call is go-redis v9; nothing here writes RESP by hand. The package
// decides nothing: which verb runs when is pkg/topology's (cache.go).
package dragonfly
