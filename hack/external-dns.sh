#!/usr/bin/env bash
# Builds external-dns at a pinned version from the Go module proxy into a cache
# outside the checkout, keyed by version: $cache/external-dns/$VERSION/external-dns.
# v0.22.0 builds with our Go 1.26 (v0.23 would need Go 1.27). Idempotent: when
# the binary is present it prints its folder and returns at once.
set -euo pipefail
EXTERNAL_DNS_VERSION=${EXTERNAL_DNS_VERSION:-v0.22.0}
here=$(cd "$(dirname "$0")" && pwd)
cache=${BLOODRAVEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloodraven}
bin="$cache/external-dns/$EXTERNAL_DNS_VERSION"
src="$cache/external-dns-src-$EXTERNAL_DNS_VERSION"

mkdir -p "$cache"
exec 9>"$cache/.external-dns.lock"
flock 9   # one build at a time; a second caller waits and then finds the binary
if [ ! -x "$bin/external-dns" ]; then
  echo "external-dns: building $EXTERNAL_DNS_VERSION (first time only, a few minutes)" >&2
  mkdir -p "$bin" "$src"
  sed "s/^require sigs.k8s.io\/external-dns .*/require sigs.k8s.io\/external-dns $EXTERNAL_DNS_VERSION/" \
    "$here/externaldns/go.mod.in" > "$src/go.mod"
  [ -f "$here/externaldns/go.sum" ] && cp "$here/externaldns/go.sum" "$src/"
  (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version=$EXTERNAL_DNS_VERSION" \
    -o "$bin/external-dns.tmp" sigs.k8s.io/external-dns)
  mv "$bin/external-dns.tmp" "$bin/external-dns"
fi
echo "$bin"
