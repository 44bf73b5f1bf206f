# The Go that builds the test tools (tests/upstream, tests/deploy/check-manifests, tests/faultproxy):
# their modules say go 1.26.0. Source this file, then `go=$(find_go) || exit 1`.
#
# $GO if set, else /usr/local/go/bin/go. PATH is not searched: Debian 12's golang-go (1.19) is
# often first there and cannot build these modules. The toolchain is the one found
# (GOTOOLCHAIN=local in the callers): nothing is downloaded behind the caller's back.
GO_MIN_MINOR=26

# go_is_recent GO: GO runs and is Go 1.GO_MIN_MINOR or newer.
go_is_recent() {
  local v minor
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  [[ $v =~ ^go1\.([0-9]+) ]] || return 1
  minor=${BASH_REMATCH[1]}
  ((minor >= GO_MIN_MINOR))
}

find_go() {
  local go=${GO:-/usr/local/go/bin/go}
  if [[ -x "$go" ]] && go_is_recent "$go"; then
    echo "$go"
    return 0
  fi
  echo "no Go >= 1.$GO_MIN_MINOR at $go ($("$go" env GOVERSION 2>/dev/null || echo missing)); install Go 1.$GO_MIN_MINOR at /usr/local/go (the official linux-amd64 release archive, unpacked in /usr/local) or set GO" >&2
  return 1
}
