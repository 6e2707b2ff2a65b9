// Package mysql is the only place in Bloodraven that writes SQL. It offers one
// Instance interface of domain verbs (Status, Fence, Unfence,
// KillAppConnections, WaitForGTID, DrainRelayLog, Promote, ReplicateFrom,
// StopReplication, ErrantAgainst, ReloadTLS) over two flavors: MySQL 8.0.23+/8.4/9.x and
// MariaDB 10.11+, chosen from @@version or forced by Config.Flavor. Each
// flavor's SQL lives in its own file behind the internal dialect interface.
//
// Contracts every verb keeps:
//   - Bounded: every call ends by the context's deadline (dial, handshake and
//     queries honour it; a blackholed link returns an error in time), and the
//     driver's dial/read/write timeouts are a backstop for contexts without one.
//   - Idempotent: repeating a verb is safe and converges on the same state.
//   - Errors wrap the sentinels of errors.go with the verb and the address,
//     e.g. "fence 10.0.0.1:3306: fence not verified: ...", for errors.Is.
//
// Fencing follows the design: MariaDB's read_only does not stop accounts with
// READ_ONLY ADMIN, so a fence also kills every application connection, and
// application accounts must never hold that privilege. Which sessions count
// as "application" is configured through Config.AppUsers and SystemUsers.
//
// TLS (tls.go): Config.TLS secures the operator's own TCP connections and
// checks the server's certificate; Credentials.TLS makes a replica connect
// to its source with its own certificate (the replication account requires
// X509) and, optionally, check the source's; ReloadTLS picks up rotated
// certificate files without a restart. All three are optional, so servers
// without certificates keep working.
package mysql
