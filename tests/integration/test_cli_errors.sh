# Bad input: one clear line naming the flag, exit 2; a missing path is a usage error too.
source "$(dirname "$0")/lib.sh"
expect_usage "--bs" probe "$SCRATCH" --bs 4q
expect_usage "--bs" probe "$SCRATCH" --bs 1000 --size 16m --runtime 1s
expect_usage "--iodepth" probe "$SCRATCH" --iodepth 0
expect_usage "--iodepth" probe "$SCRATCH" --iodepth lots
expect_usage "--iodepth-batch: must be in \[1, --iodepth (8)\], got 16" probe "$SCRATCH" --iodepth 8 --iodepth-batch 16
expect_usage "--iodepth-batch" probe "$SCRATCH" --iodepth-batch 0
expect_usage "--rw" probe "$SCRATCH" --rw randomread
expect_usage "--runtime" probe "$SCRATCH" --runtime 10x
expect_usage "--size" probe "$SCRATCH" --size big
expect_usage "--direct" probe "$SCRATCH" --direct maybe
expect_usage "--output-format" probe "$SCRATCH" --output-format yaml
expect_usage "--tolerance" probe "$SCRATCH" --early-stop --tolerance 3
expect_usage "--tolerance" probe "$SCRATCH" --early-stop --tolerance 0%
expect_usage "--min-iops" probe "$SCRATCH" --min-iops 10000
expect_usage "--min-iops" probe "$SCRATCH" --early-stop --min-iops fast
expect_usage "^iogate probe: --bs: not with --mode checkpoint" probe "$SCRATCH" --mode checkpoint --bs 4k
expect_usage "^iogate probe: --workers: not with --mode checkpoint" probe "$SCRATCH" --mode checkpoint --workers 2
expect_usage "^iogate probe: --numjobs" probe "$SCRATCH" --mode checkpoint --numjobs 0
expect_usage "^iogate probe: --mode: expected io, dataset or checkpoint" probe "$SCRATCH" --mode save
expect_usage "^iogate probe: $SCRATCH/f: not a directory" probe "$SCRATCH/f" --mode checkpoint
expect_usage "PATH" probe
expect_usage "PATH" probe "$SCRATCH/does-not-exist"
expect_usage "unrecognised\|unknown" probe "$SCRATCH" --frobnicate
expect_usage "unknown command" frobnicate
# grep reads all of it: `grep -q` exits at the first match, and the writer's SIGPIPE fails the pipe.
"$IOGATE" probe --help | grep -- "--iodepth" >/dev/null || fail "probe --help lacks --iodepth"
pass "probe --help lists the flags"

# --root names a tree with a mount table, or every mode refuses it at once (probe once measured
# and reported class "unknown" with exit 0, while detect exited 3).
expect_usage "^iogate probe: --root: $SCRATCH/no-root holds no proc/1/mountinfo" probe "$SCRATCH" --root "$SCRATCH/no-root"
expect_usage "^iogate probe: --root: " probe "$SCRATCH" --mode dataset --root "$SCRATCH/no-root"
expect_usage "^iogate detect: --root: " detect "$SCRATCH" --root "$SCRATCH/no-root"
expect_usage "^iogate preflight: --root: " preflight "$SCRATCH" --policy profile:training --no-api --root "$SCRATCH/no-root"
expect_usage "^iogate node: --root: " node --path "data=$SCRATCH" --policy profile:training --no-api --once --root "$SCRATCH/no-root"

# --direct takes fio's 0/1 and kubectl's true/false, in both modes, from one parser: yes/no/on/off
# were once accepted while the message said "expected 0 or 1".
for v in yes no on off; do
  expect_usage "^iogate probe: --direct: expected 1 or 0 (true or false), got \"$v\"$" probe "$SCRATCH" --direct "$v"
  expect_usage "^iogate probe: --direct: expected 1 or 0 (true or false), got \"$v\"$" probe "$SCRATCH" --mode dataset --direct "$v"
done

# A huge value is cut in the error line, which names the field and the value's size: a 10 MB
# field once came back whole (10,000,137 bytes on stderr).
# expect_short_usage WANT ARGS...: exit 2, one line under 1 KiB matching WANT (grep -E).
expect_short_usage() {
  local want=$1; shift
  local code=0
  "$IOGATE" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || code=$?
  local bytes
  bytes=$(wc -c <"$SCRATCH/err")
  [[ $code -eq 2 ]] || fail "huge value: exit $code, want 2 ($(head -c 300 "$SCRATCH/err"))"
  ((bytes < 1024)) || fail "huge value: $bytes bytes on stderr, want under 1 KiB: $(head -c 300 "$SCRATCH/err")"
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "huge value: want one line, got: $(head -c 300 "$SCRATCH/err")"
  grep -Eq -- "$want" "$SCRATCH/err" || fail "huge value: error does not match $want: $(cat "$SCRATCH/err")"
  pass "huge value: $bytes bytes on stderr: $(cat "$SCRATCH/err")"
}
# A flag: one argument can be at most 128 KiB (the kernel's MAX_ARG_STRLEN), so 100,000 bytes.
arg=$(head -c 100000 /dev/zero | tr '\0' x)
expect_short_usage '^iogate probe: --runtime: expected a duration .*, got a value of 100,000 bytes starting "x{64}…"$' \
  probe "$SCRATCH" --runtime "$arg"
expect_short_usage '^iogate node: --path: expected an absolute path, got a value of 100,000 bytes starting "x{64}…"$' \
  node --path "$arg" --policy profile:training --no-api --once
# A policy field: 1 MB (a policy is at most 1 MiB) where a duration and where a device class is
# expected, read by `policy check` and by preflight.
big=$(head -c 1000000 /dev/zero | tr '\0' 7)
printf 'apiVersion: iogate.io/v1\nkind: StoragePolicy\ndeadline: %s\nrules: [{name: r, min_iops: 1}]\n' "$big" >"$SCRATCH/huge-deadline.yaml"
printf 'apiVersion: iogate.io/v1\nkind: StoragePolicy\nrules: [{name: r, allowed_classes: [nvme, %s]}]\n' "$big" >"$SCRATCH/huge-class.yaml"
unset big arg
expect_short_usage '^iogate policy check: .*huge-deadline.yaml: deadline: .*a value of 1,000,000 bytes starting "7{64}…"' \
  policy check "$SCRATCH/huge-deadline.yaml"
expect_short_usage '^iogate policy check: .*huge-class.yaml: rules\[0\]\.allowed_classes\[1\]: unknown device class a value of 1,000,000 bytes starting "7{64}…"' \
  policy check "$SCRATCH/huge-class.yaml"
expect_short_usage 'huge-deadline.yaml: deadline: .*a value of 1,000,000 bytes' \
  preflight "$SCRATCH" --policy "$SCRATCH/huge-deadline.yaml" --no-api

# --context: a context that is in none of KUBECONFIG's files names itself, the files read (the
# missing one skipped) and the contexts there; in-cluster there are no contexts. No API server is
# needed: both are refused before any request.
unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
mkdir -p "$SCRATCH/kube"
cat >"$SCRATCH/kube/cluster" <<'KC'
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority-data: "eA=="}}]
contexts: [{name: dev, context: {cluster: c, user: u}}]
current-context: dev
KC
cat >"$SCRATCH/kube/user" <<'KC'
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./get-token}}}]
KC
kube_list="$SCRATCH/kube/cluster:$SCRATCH/kube/none:$SCRATCH/kube/user"
missing_context="--context \"prod\": no such context in kubeconfig $SCRATCH/kube/cluster, $SCRATCH/kube/user (contexts: dev)"
KUBECONFIG=$kube_list expect_usage "$missing_context" preflight "$SCRATCH" --policy profile:image-classification --context prod
KUBECONFIG=$kube_list expect_usage "$missing_context" node --path "data=$SCRATCH" --policy profile:image-classification --once \
  --node-name n1 --context prod
expect_usage "--context \"prod\": no such context in kubeconfig $SCRATCH/kube/cluster (contexts: dev)" \
  preflight "$SCRATCH" --policy profile:image-classification --kubeconfig "$SCRATCH/kube/cluster" --context prod
KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 expect_usage "--context dev: in-cluster" \
  preflight "$SCRATCH" --policy profile:image-classification --context dev
KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 expect_usage "--context dev: in-cluster" \
  node --path "data=$SCRATCH" --policy profile:image-classification --once --node-name n1 --context dev
for mode in preflight node webhook; do
  "$IOGATE" "$mode" --help | grep -- "--context" >/dev/null || fail "$mode --help lacks --context"
done
pass "preflight, node and webhook --help list --context"
