// Package exehash computes the SHA-256 of executables: the running
// process's own binary (Self) and a file (File). The operator reports its
// own hash in status.operatorExecutableHash and the hash of the sidecar
// binary it ships; each sidecar reports its own (docs/upgrades.md).
// Hashes are lowercase hex, 64 characters; Valid tells one from anything else.
package exehash
