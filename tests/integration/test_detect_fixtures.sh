# `iogate detect --root DIR PATH` itself, on one fake sysfs/procfs tree (tests/fixtures/sysfs/cases/
# nvme_local.sh): the command takes --root and prints JSON, and its human format names the class.
# What detection finds on every layout (class, reason, stack shape, slowest leaf and mount) is
# checked in-process, on the same JSON, by tests/unit/device/storage_stack_test.cc (unit.device).
source "$(dirname "$0")/lib.sh"
FIXTURES=${TESTS_DIR:-$(dirname "$0")/..}/fixtures/sysfs
need_tool jq
need_tool realpath
"$IOGATE" detect --help >/dev/null 2>&1 || fail "'$IOGATE detect --help' does not work: no detect command"

TREE=$SCRATCH/nvme_local
bash "$FIXTURES/cases/nvme_local.sh" "$TREE" || fail "nvme_local: the fixture does not build"

# The JSON format: exit 0, JSON, the schema, the path echoed and the class.
out=$("$IOGATE" detect --root "$TREE" /data/db --output-format json 2>"$SCRATCH/err") ||
  fail "nvme_local /data/db: detect exited $?: $(head -c 400 "$SCRATCH/err")"
jq -e . >/dev/null 2>&1 <<<"$out" || fail "nvme_local /data/db: output is not JSON: $(head -c 200 <<<"$out")"
jq -e '.schema == "iogate.detect/v1" and .path == "/data/db" and .mount.point == "/data" and .class == "nvme"' \
  >/dev/null <<<"$out" || fail "nvme_local /data/db: JSON is not schema/path/mount/class as expected: $out"
pass "nvme_local /data/db: detect --root prints the JSON (schema, path echoed, mount /data, class nvme)"

# The human format of the same detection mentions the class.
out=$("$IOGATE" detect --root "$TREE" /data --output-format human 2>&1) || fail "human format: detect failed: $out"
grep -qi nvme <<<"$out" || fail "human output does not name the class: $out"
pass "human output names the class"

# A network mount's human output has a network line naming the backend, version, server and export.
TREE=$SCRATCH/nfs4
bash "$FIXTURES/cases/nfs4.sh" "$TREE" || fail "nfs4: the fixture does not build"
out=$("$IOGATE" detect --root "$TREE" /mnt/nfs/alice --output-format human 2>&1) || fail "nfs4: detect failed: $out"
grep -q '^network  nfs 4\.2, server fileserver\.example\.com, export /export/home; proto tcp' <<<"$out" ||
  fail "nfs4: no network line naming backend, version, server and export: $out"
pass "nfs4: the human output's network line names the backend, version, server and export"
