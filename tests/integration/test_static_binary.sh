# The release binary is static, runs in an empty root that holds nothing but itself, and resolves
# host names from /etc/hosts without any NSS module.
source "$(dirname "$0")/lib.sh"
file -L "$IOGATE" | grep -q "statically linked" || fail "not statically linked: $(file -L "$IOGATE")"
pass "file says statically linked"
need_root "chroot into an empty directory"
root="$SCRATCH/empty-root"
mkdir -p "$root"
cp "$IOGATE" "$root/iogate"
[[ $(find "$root" | wc -l) -eq 2 ]] || fail "the chroot holds more than the binary"
out=$(chroot "$root" /iogate --version)
[[ "$out" =~ ^iogate\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "unexpected --version output in chroot: $out"
pass "runs --version in an empty chroot: $out"

# Host names resolve in the static binary from /etc/hosts (glibc's built-in `files` NSS back end;
# docs/manual.md "Why the image needs no CA bundle, passwd, /tmp or NSS"): a kubeconfig naming its server
# apiserver.iogate.test, which only a private /etc/hosts (a bind mount in a mount namespace of the
# run's own) maps to 127.0.0.1, where openssl s_server serves a certificate for that name. preflight
# connects, verifies the certificate for the host name, sends its GET and gets s_server's HTML
# status page, which it refuses as not an API answer. Without the hosts entry the same run cannot
# resolve the name.
need_tool openssl unshare
host=apiserver.iogate.test
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=$host" \
  -addext "subjectAltName=DNS:$host" -keyout "$SCRATCH/api.key" -out "$SCRATCH/api.crt" 2>"$SCRATCH/openssl.err" ||
  fail "openssl req: $(cat "$SCRATCH/openssl.err")"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
openssl s_server -accept "127.0.0.1:$port" -cert "$SCRATCH/api.crt" -key "$SCRATCH/api.key" -www -quiet \
  >"$SCRATCH/s_server.log" 2>&1 &
server_pid=$!
on_exit "kill $server_pid"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
cat >"$SCRATCH/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://$host:$port", certificate-authority: "$SCRATCH/api.crt"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: ml}}]
current-context: x
KC
printf '127.0.0.1 %s\n' "$host" >"$SCRATCH/hosts"
mkdir -p "$SCRATCH/data"
# Enforced, so that a failure to reach the API fails the run (fail-closed).
printf 'apiVersion: iogate.io/v1\nkind: StoragePolicy\nprofile: image-classification\nmode: enforce\n' >"$SCRATCH/policy.yaml"
# run_preflight [HOSTS_FILE]: preflight as pod ml/train-0 with the kubeconfig; output in $SCRATCH/pf.err.
run_preflight() {
  local rc=0
  unshare -m bash -c '[[ -z $1 ]] || mount --bind "$1" /etc/hosts; shift; exec "$@"' _ "${1:-}" \
    env -u KUBERNETES_SERVICE_HOST POD_NAME=train-0 POD_NAMESPACE=ml \
    "$IOGATE" preflight "$SCRATCH/data" --policy "$SCRATCH/policy.yaml" --kubeconfig "$SCRATCH/kubeconfig" \
    >/dev/null 2>"$SCRATCH/pf.err" || rc=$?
  echo "$rc"
}
rc=$(run_preflight "$SCRATCH/hosts")
[[ $rc -ne 0 ]] || fail "preflight against s_server succeeded: $(cat "$SCRATCH/pf.err")"
! grep -qE "cannot connect|not verified|handshake" "$SCRATCH/pf.err" ||
  fail "with $host in /etc/hosts the static binary did not get through to s_server: $(cat "$SCRATCH/pf.err")"
grep -q "GET /api/v1/namespaces/ml/pods/train-0: 200 InvalidResponse: the answer is not JSON" "$SCRATCH/pf.err" ||
  fail "want s_server's answer to the pod GET refused as not JSON: $(cat "$SCRATCH/pf.err")"
pass "static binary: $host resolved from /etc/hosts, TLS verified for it, the GET answered by s_server (exit $rc: $(grep -m1 'GET /api' "$SCRATCH/pf.err" | cut -d' ' -f3-))"
rc=$(run_preflight)
grep -q "cannot connect to $host:$port" "$SCRATCH/pf.err" ||
  fail "without the hosts entry want 'cannot connect to $host:$port' (exit $rc): $(cat "$SCRATCH/pf.err")"
pass "without the entry the same run cannot resolve it (exit $rc): $(grep -m1 "cannot connect" "$SCRATCH/pf.err")"
