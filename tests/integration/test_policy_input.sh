# Broken and hostile policies, given to every mode that reads one (policy check, preflight, node,
# webhook): each exits 2 with one line on stderr naming the file and what is wrong, within 256 MiB
# of address space, and leaves nothing behind. Before these bounds, a scalar `workload:` aborted
# every mode (exit 134), a 611 KB policy of aliased label values passed after 3.9 GB, and
# /dev/zero was read until bad_alloc. The parser's cases one by one: tests/unit/policy.
source "$(dirname "$0")/lib.sh"
need_tool openssl  # the webhook's certificate: it must get as far as reading the policy
source "$TESTS_DIR/lib/pki.sh"
pki_ca "$SCRATCH/pki" iogate-policy-input-test
pki_sign "$SCRATCH/pki" server /CN=localhost "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"

DATA="$SCRATCH/data"
mkdir -p "$DATA"
header='apiVersion: iogate.io/v1
kind: StoragePolicy'
rules='rules: [{name: r, min_iops: 1}]'

printf '%s\nworkload: 5\n%s\n' "$header" "$rules" >"$SCRATCH/scalar-workload.yaml"
printf '%s\nearly_stop: [on]\n%s\n' "$header" "$rules" >"$SCRATCH/list-early-stop.yaml"
printf '%s\nnode: /data\n%s\n' "$header" "$rules" >"$SCRATCH/scalar-node.yaml"
printf '%s\n%s\nwebhook: true\n' "$header" "$rules" >"$SCRATCH/scalar-webhook.yaml"
printf -- '- apiVersion: iogate.io/v1\n- kind: StoragePolicy\n' >"$SCRATCH/list-policy.yaml"
# A label value longer than Kubernetes' 63 characters.
printf '%s\nrules: [{name: r, min_iops: 1, selector: {pod_labels: {team: %s}}}]\n' "$header" "$(printf 'v%.0s' {1..64})" \
  >"$SCRATCH/long-label.yaml"
# The issue's shape: one 100 kB label value named by aliases, 611 KB in all.
{
  printf '%s\nrules:\n  - name: r\n    min_iops: 1\n    selector:\n      pod_labels:\n' "$header"
  printf '        k0: &v %s\n' "$(head -c 100000 /dev/zero | tr '\0' x)"
  for ((i = 1; i < 27000; i++)); do printf '        k%d: *v\n' "$i"; done
} >"$SCRATCH/alias-bomb.yaml"
bomb_bytes=$(wc -c <"$SCRATCH/alias-bomb.yaml")
((bomb_bytes > 600000 && bomb_bytes < 1048576)) || fail "the alias bomb is $bomb_bytes bytes, want about 611 KB"
# Paths have no length limit of their own: 40 aliases of a 100 kB path pass 4 MiB.
{
  printf '%s\nrules:\n  - name: r\n    min_iops: 1\n    selector:\n      paths:\n' "$header"
  printf '        - &p /%s\n' "$(head -c 100000 /dev/zero | tr '\0' d)"
  for ((i = 0; i < 100; i++)); do printf '        - *p\n'; done
} >"$SCRATCH/path-aliases.yaml"
# The billion laughs: 30 levels of 10 aliases of the level below.
{
  printf '%s\n%s\nmetadata:\n  annotations:\n    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n' "$header" "$rules"
  for ((i = 1; i <= 30; i++)); do
    printf '    a%d: &a%d [' "$i" "$i"
    for ((j = 0; j < 10; j++)); do printf '*a%d, ' $((i - 1)); done
    printf ']\n'
  done
} >"$SCRATCH/laughs.yaml"
# Nested deeper than yaml-cpp goes: its own message was "bad file".
{
  printf '%s\n%s\nworkload: ' "$header" "$rules"
  head -c 1000 /dev/zero | tr '\0' '['
  head -c 1000 /dev/zero | tr '\0' ']'
  echo
} >"$SCRATCH/deep.yaml"
# Larger than a ConfigMap: a valid policy with 2 MB of comment.
{
  printf '%s\n%s\n' "$header" "$rules"
  head -c 2000000 /dev/zero | tr '\0' '#'
  echo
} >"$SCRATCH/large.yaml"
mkfifo "$SCRATCH/no-writer.fifo"

# expect_refused MODE FILE WANT: iogate MODE with --policy FILE exits 2 with one line on stderr
# that names FILE and holds WANT, in 256 MiB of address space.
expect_refused() {
  local mode=$1 file=$2 want=$3 args code=0
  case "$mode" in
    policy) args=(policy check "$file") ;;
    preflight) args=(preflight "$DATA" --policy "$file" --no-api) ;;
    node) args=(node --once --no-api --policy "$file" --path "$DATA" --listen none) ;;
    webhook)
      args=(webhook --no-api --listen 127.0.0.1:0 --metrics-listen none --tls-cert "$SCRATCH/pki/server.crt" --tls-key "$SCRATCH/pki/server.key"
        --policy "$file")
      ;;
  esac
  (
    ulimit -v $((256 << 10))
    exec timeout 60 "$IOGATE" "${args[@]}"
  ) >"$SCRATCH/out" 2>"$SCRATCH/err" || code=$?
  [[ $code -eq 2 ]] || fail "$mode $(basename "$file"): exit $code, want 2: $(head -c 400 "$SCRATCH/err")"
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || fail "$mode $(basename "$file"): want one line, got: $(head -c 600 "$SCRATCH/err")"
  (($(wc -c <"$SCRATCH/err") < 1024)) || fail "$mode $(basename "$file"): a line of $(wc -c <"$SCRATCH/err") bytes"
  grep -qF -- "$file: " "$SCRATCH/err" || fail "$mode $(basename "$file"): stderr does not name $file: $(cat "$SCRATCH/err")"
  grep -qF -- "$want" "$SCRATCH/err" || fail "$mode $(basename "$file"): stderr lacks '$want': $(cat "$SCRATCH/err")"
  pass "$mode: $(cat "$SCRATCH/err")"
}

for mode in policy preflight node webhook; do
  expect_refused $mode "$SCRATCH/scalar-workload.yaml" 'workload: expected a map, got "5"'
  expect_refused $mode "$SCRATCH/list-early-stop.yaml" 'early_stop: expected a map, got a list'
  expect_refused $mode "$SCRATCH/scalar-node.yaml" 'node: expected a map, got "/data"'
  expect_refused $mode "$SCRATCH/scalar-webhook.yaml" 'webhook: expected a map, got "true"'
  expect_refused $mode "$SCRATCH/list-policy.yaml" 'policy: expected a map, got a list'
  expect_refused $mode "$SCRATCH/long-label.yaml" 'rules[0].selector.pod_labels.team: expected a label value (empty, or at most 63'
  expect_refused $mode "$SCRATCH/alias-bomb.yaml" 'aliases expand it past 4 MiB'
  expect_refused $mode "$SCRATCH/path-aliases.yaml" 'aliases expand it past 4 MiB'
  expect_refused $mode "$SCRATCH/laughs.yaml" 'aliases expand it past 4 MiB'
  expect_refused $mode "$SCRATCH/deep.yaml" 'lists and maps nested 500 deep'
  expect_refused $mode "$SCRATCH/large.yaml" 'policy: larger than 1 MiB, the most a ConfigMap holds'
  expect_refused $mode /dev/zero 'policy: larger than 1 MiB, the most a ConfigMap holds'
  expect_refused $mode "$SCRATCH/no-writer.fifo" 'policy: empty'
done

# A FIFO that never ends (a writer like `yes`): read 1 MiB + 1 byte, refused; the writer then gets
# SIGPIPE and is gone.
mkfifo "$SCRATCH/endless.fifo"
yes '# more' >"$SCRATCH/endless.fifo" &
writer=$!
on_exit "kill $writer"
expect_refused policy "$SCRATCH/endless.fifo" 'policy: larger than 1 MiB, the most a ConfigMap holds'
for _ in $(seq 50); do kill -0 "$writer" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$writer" 2>/dev/null || fail "the FIFO's writer is still running: iogate kept the FIFO open"
pass "the endless FIFO's writer got SIGPIPE once iogate stopped reading"

assert_no_test_files "$DATA"
