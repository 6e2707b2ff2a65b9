#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian machine. Idempotent:
# with everything present it only checks, which takes a few seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${BLOODRAVEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloodraven}
export GOBIN="$cache/bin"
mkdir -p "$GOBIN"

apt_pkgs=(mariadb-server mariadb-backup redis-server etcd-server iproute2 nftables bind9 bind9-dnsutils openssl)
need=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: apt-get install ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Debian starts no service by itself in containers, but stop any that did: tests run their own.
for s in mariadb redis-server etcd named; do
  (command -v systemctl >/dev/null && systemctl is-active -q "$s" 2>/dev/null && systemctl stop "$s") || true
done

go_tool() { # name module@version
  [ -x "$GOBIN/$1" ] && [ -f "$GOBIN/.$1.version" ] && [ "$(cat "$GOBIN/.$1.version")" = "$2" ] && return 0
  echo "deps: go install $2"
  GOFLAGS=-mod=mod go install "$2"
  echo "$2" > "$GOBIN/.$1.version"
}
go_tool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
go_tool helm helm.sh/helm/v3/cmd/helm@v3.21.4
# versitygw: a real S3 gateway over a folder, the object store of the backup tests.
go_tool versitygw github.com/versity/versitygw/cmd/versitygw@v1.8.0
# promtool: checks and unit-tests the chart's alert rules (make check-alerts).
go_tool promtool github.com/prometheus/prometheus/cmd/promtool@v0.316.0
# golangci-lint is optional: `make lint` uses it when it installed.
go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0 ||
  echo "deps: golangci-lint did not install; make lint runs gofmt and go vet only" >&2

"$here/kube-binaries.sh" >/dev/null
"$here/external-dns.sh" >/dev/null
echo "deps: ok ($cache)"
