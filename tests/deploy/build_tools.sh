#!/usr/bin/env bash
# Builds the deployment test tool check-manifests (iogate's own rules for rendered manifests) into
# OUTDIR; with --test also runs gofmt, go vet and its Go tests. It is a Go module of its own
# (tests/deploy/check-manifests/go.mod, go.sum committed), built with Go >= 1.26 from
# /usr/local/go (or $GO) through the Go module proxy; -mod=readonly, so go.sum must already hold
# every hash. The chart itself is rendered by the real, pinned helm (tests/upstream/build.sh).
# A missing Go fails (exit 1) and names the fix.
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
tools=(check-manifests)

source "$here/../lib/check.sh"
source "$here/../lib/go.sh"
go=$(find_go 2>&1) || fail "$go"

mkdir -p "$out"
out=$(cd "$out" && pwd)
# A user's module settings must not leak in (-mod=mod would rewrite go.sum); the toolchain is the
# one found above, never a download.
export GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local GOCACHE="$out/gocache"

# Several tests may build into the same OUTDIR at once (ctest -j); one build at a time. The lock
# file is our own, so a caller that already holds its own lock on OUTDIR cannot deadlock us.
exec 9>"$out/.build_tools.lock"
flock 9

for t in "${tools[@]}"; do
  (cd "$here/$t" && "$go" build -o "$out/$t" .)
  echo "built $out/$t"
done

if ((run_tests)); then
  gofmt=$("$go" env GOROOT)/bin/gofmt
  unformatted=$("$gofmt" -l "${tools[@]/#/$here/}")
  [[ -z "$unformatted" ]] || fail "not gofmt-formatted: $unformatted"
  for t in "${tools[@]}"; do
    (cd "$here/$t" && "$go" vet . && "$go" test -count=1 .)
  done
  pass "${tools[*]}: gofmt, go vet and go test pass"
fi
