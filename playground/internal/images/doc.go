// Package images owns the built-in stand-ins for container images: a
// MariaDB entrypoint that initialises an empty data folder the way the
// official image does before running mariadbd, and a tiny HTTP server for
// tests. The process kubelet runs them by re-executing its own binary.
package images
