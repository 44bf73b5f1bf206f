# probe --mode dataset on generated datasets: counts and size percentiles against the truth,
# the scan's budgets, read-only behaviour (a read-only loop mount, and no change to a writable
# tree: no file created, no mtime, ctime or atime moved), clear errors for an empty directory and
# for permission-denied entries, and a prompt, clean end on SIGTERM.
source "$(dirname "$0")/lib.sh"
MAKE_DATASET="$(dirname "$0")/make_dataset.py"
need_tool python3
drop_caches() { sync; [[ $(id -u) -eq 0 ]] && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }

# 1. 20,000 files of 16–200 KiB in 10 groups of 20 directories, plus 3 files of 8 MiB. Sparse:
# this is a test of the walk, the sample and the loader's bookkeeping, not of the disk (2.2 GB
# written and synced would take a minute on a busy machine; bench/dataset_vs_python.sh reads data).
ds="$SCRATCH/ds"
mkdir -p "$ds"
python3 "$MAKE_DATASET" "$ds" --files 20000 --dirs 200 --subdirs 10 --min-kib 16 --max-kib 200 --large 3 \
  --large-mib 8 --truth "$SCRATCH/truth.json" --sparse
truth() { jq -r ".$1" "$SCRATCH/truth.json"; }
# find's own readdir moves a directory's atime once (relatime), so the state is read twice: the
# second reading is the stable one to compare with. iogate opens everything O_NOATIME as root.
tree_state() { find "$1" -printf '%p %s %T@ %C@ %A@\n' | sort; }
# assert_storage_of REPORT DIR: the report's storage is DIR's own: its mount as findmnt sees it, its
# class as `iogate detect` names it.
assert_storage_of() {
  local point fstype class
  point=$(findmnt -n -o TARGET -T "$2") fstype=$(findmnt -n -o FSTYPE -T "$2")
  class=$("$IOGATE" detect "$2" --output-format json | jq -r .class)
  assert_jq "$1" ".storage.mount.point == \"$point\" and .storage.mount.fstype == \"$fstype\" and .storage.class == \"$class\"" \
    "the report's storage is that of $2: $point ($fstype), $class"
}
tree_state "$ds" >/dev/null
before=$(tree_state "$ds")
drop_caches

out="$SCRATCH/full.json"
"$IOGATE" probe --mode dataset "$ds" --workers 1,2 --runtime 2s --seed 7 --output-format json >"$out"
assert_jq "$out" ".mode == \"dataset\" and .dataset.files_exact == true and .dataset.files_estimate == $(truth files)" \
  "the whole tree was walked: $(truth files) files, exact"
assert_jq "$out" '.dataset.dirs_scanned == 212 and .dataset.files_sampled == 20000' "212 directories, a 20,000-file sample"
# A sample of 20,000 of 20,003 files: the percentiles are those of the tree within 2%.
for p in p10 p50 p90 p99; do
  assert_jq "$out" "(.dataset.file_size_bytes.$p - $(truth "$p")) | fabs <= 0.02 * $(truth "$p")" \
    "file size $p within 2% of the truth ($(truth "$p") bytes)"
done
assert_jq "$out" "(.dataset.bytes_estimate - $(truth bytes)) | fabs <= 0.02 * $(truth bytes)" "total size within 2%"
assert_jq "$out" '.loader.sweep | length == 2 and (map(.workers) == [1, 2])' "a sweep entry per worker count"
assert_jq "$out" '.loader.sweep | all(.files_read > 0 and .errors == 0 and .samples_per_s > 0)' "every run read files"
assert_jq "$out" '.loader.sweep[0].bytes_read > 0 and .loader.file_ns.p50 >= .loader.open_ns.p50' "latencies are ordered"
assert_jq "$out" '.loader.knee_workers >= 1 and (.recommendations | type == "array")' "knee and recommendations present"
assert_storage_of "$out" "$ds"
[[ "$(tree_state "$ds")" == "$before" ]] || fail "the dataset tree changed (a file created, or mtime/ctime/atime moved)"
pass "the tree is unchanged: no file created, no mtime, ctime or atime moved"

# A smaller sample (fixed seed, so deterministic): percentiles within 10%, count still exact.
out="$SCRATCH/small.json"
"$IOGATE" probe --mode dataset "$ds" --sample 2000 --workers 1 --runtime 1s --seed 11 --output-format json >"$out"
for p in p10 p50 p90; do
  assert_jq "$out" "(.dataset.file_size_bytes.$p - $(truth "$p")) | fabs <= 0.10 * $(truth "$p")" \
    "2,000-file sample: $p within 10% of the truth"
done
assert_jq "$out" "(.dataset.bytes_estimate - $(truth bytes)) | fabs <= 0.10 * $(truth bytes)" "2,000-file sample: total within 10%"

# 2. The entry budget: cut after 6,000 entries, the count is estimated from the fan-out.
out="$SCRATCH/entries.json"
"$IOGATE" probe --mode dataset "$ds" --scan-entries 6000 --workers 1 --runtime 1s --output-format json >"$out"
assert_jq "$out" '.dataset.scan_stop_reason == "entries" and .dataset.files_exact == false' "the entry budget stops the walk"
assert_jq "$out" '.dataset.entries_read <= 6000 and .dataset.files_seen < 6000' "no more entries than the budget"
assert_jq "$out" "(.dataset.files_estimate - $(truth files)) | fabs <= 0.05 * $(truth files)" \
  "the estimate is within 5% of $(truth files)"

# 3. The time budget on a large tree: 100,000 empty files, a 100 ms scan from a cold cache.
huge="$SCRATCH/huge"
mkdir -p "$huge"
python3 "$MAKE_DATASET" "$huge" --files 100000 --dirs 200 --subdirs 10 --min-kib 0 --max-kib 0 --large 0
drop_caches
out="$SCRATCH/huge.json"
start=$(date +%s%N)
"$IOGATE" probe --mode dataset "$huge" --scan-time 100ms --workers 1 --runtime 1s --output-format json >"$out"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
if jq -e '.dataset.scan_stop_reason == "complete"' "$out" >/dev/null; then
  echo "note: the 100,000-entry walk finished within 100 ms; the deadline was not reached"
else
  assert_jq "$out" '.dataset.scan_stop_reason == "time" and .dataset.files_exact == false' "the time budget stops the walk"
  assert_jq "$out" '.dataset.scan_ns < 400000000' "the walk ended within 400 ms of a 100 ms budget"
  assert_jq "$out" '.dataset.files_estimate >= .dataset.files_seen and (.dataset.estimate_method | test("estimated|lower bound"))' \
    "the count is reported as estimated"
  assert_jq "$out" '[.warnings[] | test("budget")] | any' "a warning says the scan was cut"
fi
((elapsed_ms < 5000)) || fail "a 100 ms scan and a 1 s loader took ${elapsed_ms} ms"
pass "scan + loader within their limits (${elapsed_ms} ms)"

# 3b. A policy with workload.mode dataset: preflight runs the dataset probe and judges samples/s.
cat >"$SCRATCH/policy.yaml" <<'YAML'
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
metadata: {name: dataset}
deadline: 30s
workload: {mode: dataset, workers: 2, runtime: 1s, scan_time: 2s}
rules:
  - {name: feed, min_samples_per_s: 10, samples_per_s_per_gpu: 100000000}
YAML
"$IOGATE" preflight "$ds" --policy "$SCRATCH/policy.yaml" --no-api --gpus 0 --output-format json >"$SCRATCH/pf.json"
assert_jq "$SCRATCH/pf.json" '.outcome == "pass" and .results[0].report.mode == "dataset" and (.results[0].verdict.checks[0] | .check == "min_samples_per_s" and .passed and .threshold_value == 10)' \
  "preflight with workload.mode dataset: checked min_samples_per_s, pass"
code=0
"$IOGATE" preflight "$ds" --policy "$SCRATCH/policy.yaml" --no-api --gpus 1 --output-format json >"$SCRATCH/pf.json" || code=$?
[[ $code -eq 1 ]] || fail "preflight below a samples/s floor of 100,000,000: exit $code, want 1"
assert_jq "$SCRATCH/pf.json" '.outcome == "fail" and .results[0].verdict.checks[0].threshold_value == 100000000' \
  "the per-GPU floor (1 GPU) fails it: exit 1"

# 4. Errors: an empty directory, a missing one, a file, flags of the block-I/O probe.
mkdir -p "$SCRATCH/empty"
expect_usage "empty directory" probe --mode dataset "$SCRATCH/empty"
expect_usage "no such directory" probe --mode dataset "$SCRATCH/missing"
expect_usage "not a directory" probe --mode dataset "$SCRATCH/truth.json"
expect_usage "--bs" probe --mode dataset "$ds" --bs 8k
expect_usage "--workers" probe --mode dataset "$ds" --workers 2,x
expect_usage "--workers" probe "$ds" --workers 2

# 5. Read-only: the dataset on a loop-mounted ext4 image, mounted read-only; the device sees no write.
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP part: the read-only loop mount and the permission checks need root"
else
  img="$SCRATCH/ro.img"
  truncate -s 96M "$img"
  mkfs.ext4 -q -F "$img"
  mnt="$SCRATCH/ro"
  mkdir -p "$mnt"
  if mount -o loop "$img" "$mnt" 2>/dev/null; then
    on_exit "umount '$mnt'"
    python3 "$MAKE_DATASET" "$mnt" --files 2000 --dirs 20 --subdirs 4 --min-kib 4 --max-kib 32 --large 0
    umount "$mnt"
    sum_before=$(sha256sum "$img" | cut -d' ' -f1)
    mount -o loop,ro "$img" "$mnt"
    loopdev=$(findmnt -n -o SOURCE "$mnt")
    writes_before=$(awk '{print $5}' "/sys/block/$(basename "$loopdev")/stat")
    out="$SCRATCH/ro.json"
    "$IOGATE" probe --mode dataset "$mnt" --workers 2 --runtime 2s --direct --output-format json >"$out"
    assert_jq "$out" '.dataset.files_estimate == 2000 and .loader.files_read > 0 and .loader.errors == 0' \
      "a read-only loop mount is scanned and read (O_DIRECT requested)"
    assert_storage_of "$out" "$mnt"
    writes_after=$(awk '{print $5}' "/sys/block/$(basename "$loopdev")/stat")
    [[ "$writes_before" == "$writes_after" ]] || fail "the loop device saw writes ($writes_before -> $writes_after)"
    umount "$mnt"
    [[ "$(sha256sum "$img" | cut -d' ' -f1)" == "$sum_before" ]] || fail "the image changed"
    pass "the read-only loop device saw no write and the image is unchanged"
  else
    echo "SKIP part: mount -o loop failed (no loop devices here)"
  fi

  # 6. Permission denied, as the nobody user (root reads everything).
  perm="$SCRATCH/perm"
  mkdir -p "$perm/open" "$perm/locked"
  for i in 1 2 3; do head -c 5000 /dev/urandom >"$perm/open/f$i"; head -c 5000 /dev/urandom >"$perm/locked/f$i"; done
  chmod 0755 "$SCRATCH" "$perm" "$perm/open"
  chmod 0644 "$perm"/open/*
  chmod 0700 "$perm/locked"
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  if as_nobody true 2>/dev/null; then
    out="$SCRATCH/perm.json"
    as_nobody "$IOGATE" probe --mode dataset "$perm" --workers 1 --runtime 1s --output-format json >"$out"
    assert_jq "$out" '.dataset.permission_denied == 1 and .dataset.files_estimate == 3' \
      "an unreadable directory is counted, the rest is read"
    assert_jq "$out" "(.dataset.permission_denied_paths == [\"$perm/locked\"]) and ([.warnings[] | test(\"permission denied\")] | any)" \
      "the report names the unreadable directory"
    chmod 0700 "$perm/open"
    chmod 0755 "$perm/locked"
    chmod 0711 "$perm/locked"
    code=0
    as_nobody "$IOGATE" probe --mode dataset "$perm" --workers 1 --runtime 1s 2>"$SCRATCH/err" >/dev/null || code=$?
    # open/ is now unreadable and locked/ listable by nobody only by name (0711: no read).
    [[ $code -eq 2 ]] || fail "nothing readable: exit $code, want 2 ($(cat "$SCRATCH/err"))"
    grep -q "permission denied" "$SCRATCH/err" || fail "the error does not say permission denied: $(cat "$SCRATCH/err")"
    pass "nothing readable: $(cat "$SCRATCH/err")"
  else
    echo "SKIP part: setpriv cannot switch to uid 65534"
  fi
fi

# 7. SIGTERM mid-run: a prompt exit (3) with a partial report, nothing left behind. The loader
# reads a sparse 256 GiB file (at memory speed, over a minute): the signal lands mid-file.
big="$SCRATCH/big"
mkdir -p "$big"
truncate -s 256G "$big/sample.bin"
tree_state "$big" >/dev/null
before=$(tree_state "$big")
"$IOGATE" probe --mode dataset "$big" --workers 1 --runtime 60s --output-format json >"$SCRATCH/term.json" \
  2>"$SCRATCH/err" &
pid=$!
sleep 1.5
kill -0 "$pid" 2>/dev/null || fail "the probe ended before the signal"
kill -TERM "$pid"
start=$(date +%s%N)
code=0
wait "$pid" || code=$?
waited_ms=$((($(date +%s%N) - start) / 1000000))
[[ $code -eq 3 ]] || fail "SIGTERM: exit $code, want 3 ($(cat "$SCRATCH/err"))"
((waited_ms < 2000)) || fail "SIGTERM: took ${waited_ms} ms to exit"
pass "SIGTERM: exit 3 after ${waited_ms} ms"
assert_jq "$SCRATCH/term.json" '.stop_reason == "signal"' "SIGTERM: a partial report with stop_reason signal"
grep -q "interrupted" "$SCRATCH/err" || fail "no interruption message: $(cat "$SCRATCH/err")"
[[ "$(tree_state "$big")" == "$before" ]] || fail "the tree changed after SIGTERM"
pass "SIGTERM: the tree is unchanged"
