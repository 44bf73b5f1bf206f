# What a test says about its checks, the same in every layer (integration, e2e, container,
# deploy): each layer's lib.sh sources this. A check that held prints "ok: ..." on stdout (the
# check counts in docs/testing.md are these lines); one that did not prints "FAIL: ..." on stderr.
# Sets no shell options: the layer's lib.sh does.

# pass MESSAGE: a check held.
pass() { echo "ok: $*"; }
# fail MESSAGE: a check failed; the test ends here, exit 1.
fail() { echo "FAIL: $*" >&2; exit 1; }
# skip MESSAGE: the test cannot run on this machine (ctest's SKIP_RETURN_CODE, 77).
skip() { echo "SKIP: $*"; exit 77; }

# fail_later MESSAGE: a check failed, and the test goes on, so that one run reports every problem
# (the deployment tests: each check is independent of the last); finish WHAT ends it, exit 1 if
# any check failed.
FAILS=0
fail_later() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
finish() {
  if ((FAILS > 0)); then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all $1 checks passed"
}

need_root() { [[ $(id -u) -eq 0 ]] || skip "$1 needs root"; }
# need_tool CMD...: packages scripts/install-deps.sh installs; without one the test fails, naming
# the fix (a missing tool is a broken set-up, not a machine that cannot run the test).
need_tool() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || fail "$tool is not installed: bash scripts/install-deps.sh"
  done
}

# assert_jq [JQ OPTIONS...] FILE EXPR MESSAGE: EXPR must evaluate to true on the JSON in FILE;
# the options (--arg, --argjson, --slurpfile) come first, as on jq's own command line.
assert_jq() {
  local file=${*: -3:1} expr=${*: -2:1} msg=${*: -1} out
  out=$(jq -e "${@:1:$# - 3}" "$expr" "$file" 2>&1) || fail "$msg (jq: $expr gave ${out:-false})"
  pass "$msg"
}
