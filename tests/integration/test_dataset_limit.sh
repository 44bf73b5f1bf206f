# probe --mode dataset names the resource that limits the loader (bench/feed_limit.h): on the
# steady-device rig (tests/lib/rig.sh, a tmpfs-backed loop device throttled by the cgroup I/O
# controller), a volume capped in read IOPS only and one capped in read bandwidth only, each
# holding the same ImageNet-like dataset (1,500 files of 100-120 KiB), must come out "iops" and
# "bandwidth". The caps are gp3's 16,000 IOPS and 125 MiB/s scaled down (to 500 IOPS and 12 MB/s)
# so that a small client is far from being the limit; the advice must then name the same limit.
# The classifier itself is unit-tested (tests/unit/probe/feed_limit_test.cc); this is its
# measurement on real caps.
source "$(dirname "$0")/lib.sh"
use_rig
need_tool python3
MAKE_DATASET="$(dirname "$0")/make_dataset.py"

for case in iops:--riops:500 bandwidth:--rbps:12000000; do
  IFS=: read -r want flag cap <<<"$case"
  rig="limit-$want"
  rig_up "$rig" --backing tmpfs "$flag" "$cap" --size 400m || fail "tests/lib/rig.sh up $rig"
  dir=$(rig_dir "$rig")
  python3 "$MAKE_DATASET" "$dir/ds" --files 1500 --dirs 15 --subdirs 3 --min-kib 100 --max-kib 120 --large 0
  sync
  out="$SCRATCH/$want.json"
  # A target far above either cap: the advice must say the volume is the limit, and which.
  rig_run "$rig" "$IOGATE" probe --mode dataset "$dir/ds" --workers 2 --runtime 2s --seed 3 \
    --target-samples-per-s 5000 --output-format json >"$out"
  got=$(jq -r '.limit.resource' "$out")
  [[ $got == "$want" ]] || fail "$flag $cap: limit $got, want $want: $(jq -r '.limit.why' "$out")"
  pass "$flag $cap: limit $want ($(jq -r '.loader.samples_per_s | round' "$out") samples/s): $(jq -r '.limit.why' "$out")"
  assert_jq "$out" '.limit.points | (.whole.files > 0 and .halves.files > 0 and .doubled.workers == 4)' \
    "$flag $cap: the three points were measured"
  assert_jq "$out" "[.recommendations[] | select(.id == \"workers-for-target\") | .message | test(\"$want\")] == [true]" \
    "$flag $cap: the workers-for-target advice names $want"
  # The human report shows the finding. Which cap a second, shorter run names is the JSON run's
  # question above; under a loaded CI machine a 1 s run once named the other cap, so this asks
  # only that the line names a storage cap.
  rig_run "$rig" "$IOGATE" probe --mode dataset "$dir/ds" --workers 2 --runtime 1s --seed 4 >"$SCRATCH/$want.txt"
  grep -Eq "^limit +(iops|bandwidth): " "$SCRATCH/$want.txt" ||
    fail "$flag $cap: the human report has no limit line naming a storage cap: $(cat "$SCRATCH/$want.txt")"
  pass "$flag $cap: the human report's limit line names a storage cap: $(grep -E '^limit' "$SCRATCH/$want.txt")"
  rig_down "$rig"
done

# Without the measurement (--no-limit) the storage caps cannot be told apart: unknown, no points.
mkdir -p "$SCRATCH/small"
python3 "$MAKE_DATASET" "$SCRATCH/small" --files 200 --dirs 4 --subdirs 2 --min-kib 8 --max-kib 16 --large 0
"$IOGATE" probe --mode dataset "$SCRATCH/small" --workers 1 --runtime 1s --no-limit --output-format json >"$SCRATCH/nl.json"
assert_jq "$SCRATCH/nl.json" '.limit.points.whole == null and (.limit.resource == "unknown" or .limit.resource == "reader-cpu" or .limit.resource == "metadata")' \
  "--no-limit: no points, and no storage cap claimed"
expect_usage "--no-limit" probe "$SCRATCH/small" --no-limit
