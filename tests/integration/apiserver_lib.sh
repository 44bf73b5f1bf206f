# Starts the test API server (tests/apiserver) for one test, with its own throwaway PKI and token,
# stopped on every exit path; helpers to seed objects, inject faults and read what a client wrote.
# Source after lib.sh.
: "${IOGATE_TEST_APISERVER:?IOGATE_TEST_APISERVER must point at iogate-test-apiserver (ctest sets it)}"
need_tool curl

API_TOKEN="it-token-$RANDOM$RANDOM"
API_CERTS="$SCRATCH/certs"

# start_apiserver: sets API_URL and API_PID; the server is stopped on exit.
start_apiserver() {
  bash "$TESTS_DIR/apiserver/make_certs.sh" "$API_CERTS" >/dev/null
  "$IOGATE_TEST_APISERVER" --cert-dir "$API_CERTS" --token "$API_TOKEN" --port 0 \
    >"$SCRATCH/apiserver.out" 2>"$SCRATCH/apiserver.err" &
  local pid=$!
  API_PID=$pid
  on_exit "kill $pid"
  for _ in $(seq 100); do
    API_URL=$(sed -n 's/^listening on //p' "$SCRATCH/apiserver.out")
    [[ -n "$API_URL" ]] && { pass "test API server on $API_URL"; return 0; }
    kill -0 "$pid" 2>/dev/null || fail "test API server exited: $(cat "$SCRATCH/apiserver.err")"
    sleep 0.1
  done
  fail "test API server did not start"
}

# api METHOD PATH [BODY]: a request as the test (not as the client under test). CT sets the
# content type (merge patch for PATCH, JSON otherwise).
api() {
  local ct=${CT:-application/json}
  [[ $1 == PATCH && -z ${CT:-} ]] && ct=application/merge-patch+json
  curl -sS --fail-with-body --cacert "$API_CERTS/ca.crt" -H "Authorization: Bearer $API_TOKEN" \
    -H "Content-Type: $ct" -X "$1" "$API_URL$2" ${3:+--data-binary "$3"}
}
seed() { api POST /_test/objects "$1" >/dev/null; }
fault() { api POST /_test/faults "$1" >/dev/null; }
clear_faults() { api DELETE /_test/faults >/dev/null; }
clear_requests() { api DELETE /_test/requests >/dev/null; }

# write_kubeconfig FILE [NAMESPACE]: a kubeconfig for the test server with the test token (the CA
# path relative to the file, as kubectl resolves it).
write_kubeconfig() {
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$API_URL", certificate-authority: certs/ca.crt}
users:
- name: tester
  user: {token: "$API_TOKEN"}
contexts:
- name: test
  context: {cluster: test, user: tester${2:+, namespace: $2}}
current-context: test
KC
}
