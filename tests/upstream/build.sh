#!/usr/bin/env bash
# Builds the upstream tools the deploy and e2e tests and the fleet bench run (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kubelet, etcd, helm, kwok) and the network
# file system tests' SeaweedFS (weed) from the versions
# pinned in versions.env, each from its own small Go module beside this script, through the Go
# module proxy.
#
#   tests/upstream/build.sh [--print-bin] [TOOL...]
#
# With no TOOL, the modules the tests run (kube, etcd, helm, seaweedfs); kwok, which only
# bench/fleet.sh runs, is built when named (a fresh machine's CI does not pay for it). ctest builds
# each module as a test of its own (tools.MODULE, the fixture of the tests that run it).
#
# Each module builds into $IOGATE_TOOLS_CACHE/<module>-<version>-<hash>/ (default cache
# /var/cache/iogate-tools), the hash covering the module's go.mod and go.sum and the package list
# and -ldflags below: a new pin, a new go.sum or another set of binaries is a new folder, and a
# folder that is complete (its .done stamp) is reused without running go at all.
# $IOGATE_TOOLS_CACHE/bin/ then holds a link per tool to the current build; --print-bin prints
# that folder (tests add it to PATH). Go's own build and module caches (GOCACHE, GOMODCACHE) stay
# where the machine keeps them, so a pin bump recompiles only what changed. Callers building the
# same module serialise on its lock in the cache; two modules may build at once.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}

print_bin=0
wanted=()
for a in "$@"; do
  case "$a" in
    --print-bin) print_bin=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build.sh: unknown flag $a" >&2; exit 2 ;;
    *) wanted+=("$a") ;;
  esac
done

# module: version, Go packages to build (binary name = last path element), -ldflags.
# Kubernetes and helm stamp their version at link time (as their Makefiles do), so kubectl
# version, /version and helm's Capabilities.KubeVersion say the pinned release, not v0.0.0.
kube_minor=${KUBERNETES_VERSION#v1.}; kube_minor=${kube_minor%%.*}
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
declare -A version packages ldflags
version[kube]=$KUBERNETES_VERSION
# kubelet: the e2e node (tests/e2e/node_lib.sh) registers a real one against the test cluster.
# Upstream builds it static too (CGO_ENABLED=0), as every binary here.
packages[kube]="k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet"
ldflags[kube]=$kube_ldflags
version[etcd]=$ETCD_VERSION
packages[etcd]="iogate.test/upstream/etcd"
ldflags[etcd]="-s -w"
version[helm]=$HELM_VERSION
packages[helm]="helm.sh/helm/v4/cmd/helm"
ldflags[helm]="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
# kwok: fake nodes and pods for bench/fleet.sh (its release source already says its version).
version[kwok]=$KWOK_VERSION
packages[kwok]="sigs.k8s.io/kwok/cmd/kwok"
ldflags[kwok]="-s -w"
# seaweedfs: weed (master, volume, filer, S3 gateway, FUSE mount) for the network file system
# tests (tests/lib/netfs.sh). COMMIT is what upstream's Makefile stamps; `weed version` names it.
version[seaweedfs]=$SEAWEEDFS_VERSION
packages[seaweedfs]="github.com/seaweedfs/seaweedfs/weed"
ldflags[seaweedfs]="-s -w -X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=${SEAWEEDFS_VERSION##*-}"
modules=(kube etcd helm kwok seaweedfs)
test_modules=(kube etcd helm seaweedfs)

binary_module() {  # TOOL -> the module that builds it
  local m p
  for m in "${modules[@]}"; do
    for p in ${packages[$m]}; do
      [[ "${p##*/}" == "$1" ]] && { echo "$m"; return; }
    done
  done
  echo "build.sh: no module builds '$1' (tools: kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet etcd helm kwok weed)" >&2
  exit 2
}

selected=()
if ((${#wanted[@]} == 0)); then
  selected=("${test_modules[@]}")
else
  declare -A seen=()
  for t in "${wanted[@]}"; do
    m=$(binary_module "$t")
    [[ -n "${seen[$m]:-}" ]] || { seen[$m]=1; selected+=("$m"); }
  done
fi

source "$here/../lib/go.sh"

mkdir -p "$cache/bin"

for m in "${selected[@]}"; do
  exec 9>"$cache/.lock-$m"
  flock 9
  # The key: everything that decides what lands in the folder. A binary added to (or dropped from)
  # packages[] must not reuse a folder built without it.
  sum=$( { cat "$here/$m/go.mod" "$here/$m/go.sum"; printf '%s\n' "${packages[$m]}" "${ldflags[$m]}"; } |
    sha256sum | cut -c1-12)
  dir="$cache/$m-${version[$m]}-$sum"
  if [[ ! -f "$dir/.done" ]]; then
    go=${go:-$(find_go)} || exit 1
    echo "build.sh: building $m ${version[$m]} into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir.tmp"
    start=$SECONDS
    # -mod=readonly: go.sum is committed and must already hold every hash; GOFLAGS from the
    # caller's environment could otherwise turn on -mod=mod and rewrite it.
    (cd "$here/$m" && GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local \
      "$go" build -trimpath -ldflags "${ldflags[$m]}" -o "$dir.tmp/" ${packages[$m]})
    echo "$((SECONDS - start))" > "$dir.tmp/.build-seconds"
    touch "$dir.tmp/.done"
    mv "$dir.tmp" "$dir"
    echo "build.sh: built $m in $((SECONDS - start)) s" >&2
  fi
  for f in "$dir"/*; do
    ln -sfn "$f" "$cache/bin/${f##*/}"
  done
  exec 9>&-
done

((print_bin)) && echo "$cache/bin"
exit 0
