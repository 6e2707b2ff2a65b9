#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler and kubectl at a
# pinned version from the Go module proxy, into a cache outside the checkout,
# keyed by version, and links etcd from Debian's etcd-server next to them.
# Idempotent: when every binary is present it returns at once.
set -euo pipefail
KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
here=$(cd "$(dirname "$0")" && pwd)
cache=${BLOODRAVEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloodraven}
bin="$cache/kube/$KUBE_VERSION"
src="$cache/kubebin-src-$KUBE_VERSION"
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

mkdir -p "$cache"
exec 9>"$cache/.kube-binaries.lock"
flock 9   # one build at a time; a second caller waits and then finds the binaries
missing=()
for c in "${cmds[@]}"; do [ -x "$bin/$c" ] || missing+=("$c"); done
if [ ${#missing[@]} -gt 0 ]; then
  mkdir -p "$bin" "$src"
  cp "$here/kubebin/go.mod.in" "$src/go.mod"
  cp "$here/kubebin/go.sum" "$src/"; cp "$here/kubebin/tools.go.in" "$src/tools.go"
  minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  done
  for c in "${missing[@]}"; do
    echo "kube-binaries: building $c $KUBE_VERSION (first time only, a few minutes)"
    (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ld" -o "$bin/$c.tmp" "k8s.io/kubernetes/cmd/$c")
    mv "$bin/$c.tmp" "$bin/$c"
  done
fi
etcd_path=$(command -v etcd || true)
[ -n "$etcd_path" ] || { echo "kube-binaries: etcd not found; install Debian's etcd-server (make deps)" >&2; exit 1; }
ln -sf "$etcd_path" "$bin/etcd"
echo "$bin"
