#!/usr/bin/env bash
# Builds the deployment test tools (helm-render, check-manifests) into OUTDIR; with --test also
# runs gofmt, go vet and their Go tests. Offline: Go and its libraries come from Debian
# (scripts/install-deps.sh) and build in GOPATH mode from /usr/share/gocode, so no module proxy
# is needed. Exits 77 (ctest's skip) where Go or a library is missing.
set -euo pipefail

usage() { echo "usage: $0 OUTDIR [--test]" >&2; exit 2; }
out="" run_tests=0
for a in "$@"; do
  case "$a" in
    --test) run_tests=1 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) [[ -z "$out" ]] || usage; out=$a ;;
  esac
done
[[ -n "$out" ]] || usage

src=${BASH_SOURCE[0]}
[[ "$src" == */* ]] || src=./$src
here=$(cd "${src%/*}" && pwd)
tools=(helm-render check-manifests)

if ! command -v go >/dev/null; then
  echo "SKIP: go not found; install golang-go (scripts/install-deps.sh installs it with the test packages)"
  exit 77
fi
gocode=/usr/share/gocode
for pkg in github.com/Masterminds/sprig gopkg.in/yaml.v2 gopkg.in/yaml.v3; do
  if [[ ! -d "$gocode/src/$pkg" ]]; then
    echo "SKIP: $gocode/src/$pkg missing; install golang-github-masterminds-sprig-dev golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev"
    exit 77
  fi
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
# GOPATH mode against Debian's packaged sources; a user's module settings must not leak in.
export GOPATH=$gocode GO111MODULE=off GOFLAGS="" GOENV=off GOCACHE="$out/gocache"

# Several tests may build into the same OUTDIR at once (ctest -j); one build at a time. The lock
# file is our own, so a caller that already holds its own lock on OUTDIR cannot deadlock us.
if command -v flock >/dev/null; then
  exec 9>"$out/.build_tools.lock"
  flock 9
fi

for t in "${tools[@]}"; do
  (cd "$here/$t" && go build -o "$out/$t" .)
  echo "built $out/$t"
done

if ((run_tests)); then
  gofmt=$(go env GOROOT)/bin/gofmt
  unformatted=$("$gofmt" -l "${tools[@]/#/$here/}")
  if [[ -n "$unformatted" ]]; then
    echo "FAIL: not gofmt-formatted: $unformatted" >&2
    exit 1
  fi
  for t in "${tools[@]}"; do
    (cd "$here/$t" && go vet . && go test -count=1 .)
  done
fi
