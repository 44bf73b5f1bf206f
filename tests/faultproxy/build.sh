#!/usr/bin/env bash
# Builds faultproxy (this folder's Go module, standard library only) and prints the binary's path.
#
#   tests/faultproxy/build.sh [--test]
#
# The binary goes to $IOGATE_TOOLS_CACHE/faultproxy-<hash of go.mod, go.sum and the non-test
# sources>/faultproxy (default cache /var/cache/iogate-tools) and is reused while that folder is
# complete (its .done stamp). --test first checks the module: gofmt -l (no output), go vet, go test.
# Go >= 1.26 from $GO, /usr/local/go/bin/go or PATH, as tests/upstream/build.sh finds it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}
test=0
for a in "$@"; do
  case "$a" in
    --test) test=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "faultproxy/build.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

source "$here/../lib/go.sh"

# -mod=readonly: go.sum (if a dependency ever comes) must already hold every hash.
export GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local
cd "$here"
if ((test)); then
  go=$(find_go)
  unformatted=$("$(dirname "$go")/gofmt" -l .)
  [[ -z "$unformatted" ]] || { echo "faultproxy/build.sh: not gofmt-clean: $unformatted" >&2; exit 1; }
  "$go" vet ./... >&2
  "$go" test -count=1 ./... >&2
fi

sum=$(cat go.mod $(ls go.sum 2>/dev/null) $(ls ./*.go | grep -v '_test\.go$' | sort) | sha256sum | cut -c1-12)
dir="$cache/faultproxy-$sum"
mkdir -p "$cache"
exec 9>"$cache/.faultproxy.lock"
flock 9
if [[ ! -f "$dir/.done" ]]; then
  go=${go:-$(find_go)}
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp"
  "$go" build -trimpath -ldflags "-s -w" -o "$dir.tmp/faultproxy" .
  touch "$dir.tmp/.done"
  mv "$dir.tmp" "$dir"
  echo "faultproxy/build.sh: built $dir/faultproxy" >&2
fi
echo "$dir/faultproxy"
