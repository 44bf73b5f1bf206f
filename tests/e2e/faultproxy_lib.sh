# tests/faultproxy (README there) in front of the e2e cluster's real apiserver, and the helpers
# the tests drive it with. Source it after lib.sh (SCRATCH, CLUSTER_DIR, CLUSTER_SERVER,
# CLUSTER_CA, pki_sign, wait_until, on_exit, pass, fail).

# faultproxy_start [--test]: build the proxy (cached by its sources' hash; --test first runs its
# gofmt, go vet and go test), sign its serving pair with the cluster CA for IP:127.0.0.1 (clients
# verify it exactly as they verify the apiserver), start it, stopped on exit, and wait until it
# listens. Sets PROXY_URL (https://127.0.0.1:PORT), CONTROL_URL (http://127.0.0.1:PORT),
# PROXY_PORT, PROXY_LOG (its request log, JSON lines) and PROXY_PID; its stdout and stderr are
# $SCRATCH/proxy.out and $SCRATCH/proxy.err. Fails the test with the proxy's output if it does not
# start.
faultproxy_start() {
  local faultproxy
  faultproxy=$(bash "$TESTS_DIR/faultproxy/build.sh" "$@" 2>"$SCRATCH/faultproxy-build.log") ||
    fail "faultproxy: build${1:+, gofmt, go vet or go test} failed: $(tail -30 "$SCRATCH/faultproxy-build.log")"
  if [[ ${1:-} == --test ]]; then
    grep -q '^ok' "$SCRATCH/faultproxy-build.log" ||
      fail "faultproxy: go test did not report ok: $(cat "$SCRATCH/faultproxy-build.log")"
    pass "faultproxy: gofmt, go vet, go test ok; $faultproxy"
  fi
  local pki="$CLUSTER_DIR/pki"
  pki_sign "$pki" faultproxy "/CN=iogate-faultproxy" "$(pki_server_ext IP:127.0.0.1)"
  PROXY_LOG="$SCRATCH/proxy.jsonl"
  : >"$PROXY_LOG"
  setpriv --pdeathsig TERM -- "$faultproxy" -listen 127.0.0.1:0 -control 127.0.0.1:0 \
    -cert "$pki/faultproxy.crt" -key "$pki/faultproxy.key" -upstream "$CLUSTER_SERVER" -upstream-ca "$CLUSTER_CA" \
    -log "$PROXY_LOG" >"$SCRATCH/proxy.out" 2>"$SCRATCH/proxy.err" &
  PROXY_PID=$!
  on_exit "kill -TERM $PROXY_PID"
  wait_until 20 _faultproxy_up_or_gone
  grep -q '^listening on ' "$SCRATCH/proxy.out" || {
    kill -0 "$PROXY_PID" 2>/dev/null && fail "faultproxy not listening after 20 s: $(cat "$SCRATCH/proxy.out" "$SCRATCH/proxy.err")"
    fail "faultproxy exited: $(cat "$SCRATCH/proxy.out" "$SCRATCH/proxy.err")"
  }
  PROXY_URL=$(sed -n 's/^listening on //p' "$SCRATCH/proxy.out")
  CONTROL_URL=$(sed -n 's/^control on //p' "$SCRATCH/proxy.out")
  [[ $PROXY_URL =~ ^https://127\.0\.0\.1:[0-9]+$ && $CONTROL_URL =~ ^http://127\.0\.0\.1:[0-9]+$ ]] ||
    fail "faultproxy did not say where it listens: $(cat "$SCRATCH/proxy.out" "$SCRATCH/proxy.err")"
  PROXY_PORT=${PROXY_URL##*:}
  pass "faultproxy on $PROXY_URL (control $CONTROL_URL) in front of $CLUSTER_SERVER"
}
# Listening, or no longer running: either ends faultproxy_start's wait.
_faultproxy_up_or_gone() { grep -q '^listening on ' "$SCRATCH/proxy.out" || ! kill -0 "$PROXY_PID"; }

# fault JSON: add a fault (tests/faultproxy/README.md); prints its id.
fault() {
  local out
  out=$(curl -sS --fail-with-body -X POST --data "$1" "$CONTROL_URL/faults") || fail "fault $1: $out"
  jq -r '.ids[0]' <<<"$out"
}
clear_faults() { curl -sSf -X DELETE "$CONTROL_URL/faults" >/dev/null; }
# held: how many requests the proxy holds now (hang, hold).
held() { curl -sSf "$CONTROL_URL/faults" | jq '[.[].held] | add // 0'; }
# mark: the proxy's last request number so far; requests_since MARK FILE: the later ones, in
# arrival order.
mark() { jq -s 'map(.seq) | max // 0' "$PROXY_LOG"; }
requests_since() { jq -s --argjson m "$1" 'map(select(.seq > $m)) | sort_by(.seq)' "$PROXY_LOG" >"$2"; }
# statuses FILE METHOD PATH_SUFFIX: the statuses the proxy answered those requests with, in order.
statuses() { jq -c --arg m "$2" --arg p "$3" '[.[] | select(.method == $m and (.path | endswith($p))) | .status]' "$1"; }
