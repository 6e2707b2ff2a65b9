// Package objstore keeps backups and archived binlogs in an S3-compatible
// object store: AWS S3 or anything that speaks its API (versitygw in the
// tests and the playground). It is a thin layer over minio-go: an endpoint,
// a bucket and a key prefix, credentials, path-style addressing for
// gateways that need it, and an optional CA bundle for a private endpoint.
// Uploads stream in parts, so a backup of unknown size never sits in
// memory or on disk.
package objstore
