# The accelerator-utilisation (AU) proof, shared by bench/au_grid.sh and
# tests/integration/test_au_verdict.sh: the scaled volumes, the scaled demand, iogate's predicted AU
# and the real DataLoader's measured AU (tests/lib/dataloader_au.py) on the same rig and dataset.
# Sourced after tests/lib/rig.sh; needs $IOGATE, jq, and Debian's python3-torch (/usr/bin/python3).
#
# Scale: every rate is 0.1 of the real one, so a small client (the loader's workers and the main
# process on a couple of cores) is not the limit; AU is a ratio of rates, so it does not change with the scale.

AU_SCALE_NOTE="every rate x0.1"
# name:read IOPS:read bytes/s, scaled. The real ones: gp3 16,000 IOPS provisioned with its default
# 125 MiB/s; a SATA SSD 8,200 IOPS / 500 MB/s (the seed's example); a data-centre NVMe 51,000 /
# 3 GB/s (random-read IOPS of a read-intensive U.2 at QD1-32 per queue, sequential 3 GB/s); a
# 7,200 rpm HDD ~300 IOPS / ~150 MB/s. "uncapped" is the same loop device without a throttle: it
# shows what the client itself reads.
AU_VOLUMES=(gp3:1600:13107200 sata:820:50000000 nvme:5100:300000000 hdd:30:15000000)
AU_UNCAPPED=uncapped::
# The demand: ResNet-50 on one GPU at 2,500 images/s (the issue's figure), scaled.
AU_SPS=${AU_SPS:-250}
AU_MIN=${AU_MIN:-0.90}
AU_SAMPLE_SIZE=110k
# The loader: DataLoader num_workers and per-accelerator batch; iogate's probe gets the same workers.
# Batch 64 makes a step 0.256 s of compute: the loop's own cost per step (a batch through the
# workers' queue, the sleep's wake-up) is some milliseconds on a small, busy client: a share of AU
# at batch 32 (0.128 s) that the verdicts would feel, half that at 64. MLPerf's resnet50 steps are longer still (batch 400,
# 0.224 s on an H100, 2.24 s at this scale).
AU_WORKERS=${AU_WORKERS:-2}
AU_BATCH=${AU_BATCH:-64}
# Both readers run at nice -10 where permitted (root): the client of a training node has its
# cores; here the emulated accelerator's wake-ups would otherwise queue behind whatever else runs
# on the shared CPUs (a build beside it).
AU_NICE=(nice -n -10)
[[ $(id -u) -eq 0 ]] || AU_NICE=()
# An ImageNet-like tree: sizes uniform in 20-200 KiB (mean 110 KiB), 100 files a directory. Files
# are reread across runs: each reader drops every file from the page cache before and after it
# reads it (posix_fadvise DONTNEED), so every read goes to the device.
AU_MIN_KIB=20
AU_MAX_KIB=200
# Where iogate's prediction comes from: "preflight" (the verdict's own `demand` object: iogate
# preflight --gpus N with a demand rule, workload.mode auto) or "probe" (iogate probe --mode dataset
# and the demand model's arithmetic here: the dataset measurement alone, without the verdict).
AU_PREDICT=${AU_PREDICT:-preflight}
AU_PY=${AU_PY:-/usr/bin/python3}
# Shard-shaped access: AU_SHARDS is the shards' size (the demand's shard_size); AU_SAMPLE_SIZE is
# then a record's. The DataLoader streams records out of the *.tar shards (dataloader_au.py --shards).
AU_SHARDS=${AU_SHARDS:-}
_au_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# au_check_torch: one line naming the fix when the DataLoader cannot run.
au_check_torch() {
  "$AU_PY" -c 'import torch.utils.data' 2>/dev/null ||
    { echo "PyTorch is missing for $AU_PY: apt-get install python3-torch (bash scripts/install-deps.sh)"; return 1; }
}

# au_volume_up NAME RIOPS RBPS SIZE FILES: a tmpfs-backed rig (the cap, not the host's disk, sets
# the pace) holding the dataset in $(rig_dir NAME)/data, written back so its pages are clean.
# With AU_SHARDS set, FILES is the number of tar shards of AU_SHARDS bytes, each holding records of
# AU_SAMPLE_SIZE bytes (tests/lib/make_shards.py, WebDataset's layout).
au_volume_up() {
  local name=$1 riops=$2 rbps=$3 size=$4 files=$5 caps=()
  [[ -z $riops ]] || caps+=(--riops "$riops")
  [[ -z $rbps ]] || caps+=(--rbps "$rbps")
  rig_up "$name" --backing tmpfs "${caps[@]}" --size "$size" >/dev/null || return
  if [[ -n $AU_SHARDS ]]; then
    local record shard
    record=$(numfmt --from=iec "${AU_SAMPLE_SIZE^^}") && shard=$(numfmt --from=iec "${AU_SHARDS^^}") || return
    "$AU_PY" "$_au_here/make_shards.py" "$(rig_dir "$name")/data" --shards "$files" --records $((shard / record)) \
      --record-bytes "$record" || return
  else
    "$AU_PY" "$_au_here/../integration/make_dataset.py" "$(rig_dir "$name")/data" --files "$files" \
      --dirs $((files / 100 > 0 ? files / 100 : 1)) --subdirs 10 --min-kib $AU_MIN_KIB --max-kib $AU_MAX_KIB \
      --large 0 || return
  fi
  sync
}

# au_predict RIG DATA N PROBE_RUNTIME: one JSON object, iogate's view of N accelerators:
# {accelerators, samples_per_s_needed, samples_per_s_delivered, predicted_au, min_au,
#  accelerators_sustained, limit}, the shape of the verdict's `demand` object.
au_predict() {
  local rig=$1 data=$2 n=$3 runtime=$4
  if [[ $AU_PREDICT == preflight ]]; then
    local policy
    policy=$(au_policy "$runtime")
    # Exit 0 or 1 is a verdict (pass, fail); the demand object says why. Its log goes to stderr
    # only when there is no verdict.
    local out rc=0
    out=$(rig_run "$rig" "${AU_NICE[@]}" "$IOGATE" preflight "$data" --policy "$policy" --gpus "$n" --no-api \
      --output-format json 2>"$policy.log") || rc=$?
    ((rc <= 1)) || { cat "$policy.log" >&2; rm -f "$policy" "$policy.log"; return "$rc"; }
    rm -f "$policy" "$policy.log"
    jq -c '[.. | objects | select(has("predicted_au"))][0] // error("no demand object in the verdict")' <<<"$out"
    return
  fi
  # Until then: the dataset probe with the loader's concurrency, and the demand model's arithmetic
  # (predicted AU = min(1, delivered / needed); sustained = floor(delivered / (min_au x S))).
  rig_run "$rig" "${AU_NICE[@]}" "$IOGATE" probe --mode dataset "$data" --workers "$AU_WORKERS" --runtime "$runtime" \
    --output-format json |
    jq -c --argjson n "$n" --argjson s "$AU_SPS" --argjson min "$AU_MIN" '
      .loader.samples_per_s as $d | ($n * $s) as $need |
      {accelerators: $n, samples_per_s_needed: $need, samples_per_s_delivered: $d,
       predicted_au: ([1, $d / $need] | min), min_au: $min,
       accelerators_sustained: ($d / ($min * $s) | floor), limit: "-",
       bytes_per_s: .loader.bytes_per_s}'
}

# au_policy RUNTIME: a policy file (path on stdout; the caller removes it) with the scaled demand,
# as au_predict and au_node_sustained judge by.
au_policy() {
  local policy
  policy=$(mktemp "${TMPDIR:-/tmp}/au-policy.XXXXXX.yaml")
  cat >"$policy" <<EOF
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
workload: {mode: auto, workers: $AU_WORKERS, runtime: $1, size: 64m}
rules:
  - name: feed-accelerators
    demand: {samples_per_s: $AU_SPS, sample_size: $AU_SAMPLE_SIZE, min_au: $AU_MIN${AU_SHARDS:+, shard_size: $AU_SHARDS}}
EOF
  echo "$policy"
}

# au_node_sustained RIG DATA RUNTIME: what the node agent labels a node with this volume as its data
# path (`iogate node --once`, no API): the accelerators its rule's label says it sustains.
au_node_sustained() {
  local rig=$1 data=$2 policy out rc=0
  policy=$(au_policy "$3")
  out=$(rig_run "$rig" "${AU_NICE[@]}" "$IOGATE" node --once --no-api --listen none --policy "$policy" \
    --path "$data" --gpus 8 --busy-util 100% --output-format json 2>"$policy.log") || rc=$?
  ((rc <= 1)) || { cat "$policy.log" >&2; rm -f "$policy" "$policy.log"; return "$rc"; }
  rm -f "$policy" "$policy.log"
  jq -er '.demands[0].accelerators_sustained' <<<"$out"
}

# au_measure RIG DATA N RUNTIME_S: the real DataLoader's JSON line (tests/lib/dataloader_au.py), plus
# what the loop device saw over the whole run (start-up and prefetch included): device_reads and
# device_bytes (/sys/block/loopN/stat), for the I/Os a sample costs and which cap bound the run.
au_measure() {
  local rig=$1 data=$2 n=$3 runtime=$4 stat out r0 b0 r1 b1
  stat=/sys/block/$(basename "$(cat "$RIG_STATE/$rig/dev")")/stat
  read -r r0 _ b0 _ <"$stat"
  out=$(rig_run "$rig" "${AU_NICE[@]}" "$AU_PY" "$_au_here/dataloader_au.py" "$data" --accelerators "$n" \
    --samples-per-s "$AU_SPS" --workers "$AU_WORKERS" --batch "$AU_BATCH" --runtime "$runtime" --seed "$RANDOM" \
    ${AU_SHARDS:+--shards}) || return
  read -r r1 _ b1 _ <"$stat"
  jq -c --argjson r $((r1 - r0)) --argjson b $(((b1 - b0) * 512)) '. + {device_reads: $r, device_bytes: $b}' <<<"$out"
}

# au_bound MEASURED_JSON RIOPS RBPS: which cap the DataLoader's run ran into, from its own rates:
# "bandwidth" or "iops" where it read at 90% of that cap or more, "none" where the demand was met
# (AU >= 0.95), else "client" (the reader's own CPU or latency). I/Os a sample = the device's
# bytes per read over the loader's bytes per sample.
au_bound() {
  jq -r --arg riops "$2" --arg rbps "$3" '
    (.bytes / .samples) as $per | ($per / (.device_bytes / ([.device_reads, 1] | max))) as $ios |
    (.bytes / .wall_s) as $bps | (.samples_per_s * $ios) as $iops |
    if $rbps != "" and $bps >= 0.9 * ($rbps | tonumber) then "bandwidth"
    elif $riops != "" and $iops >= 0.9 * ($riops | tonumber) then "iops"
    elif .au >= 0.95 then "none" else "client" end + "\t\($ios * 100 | round / 100)"' <<<"$1"
}

# au_compare PREDICTED_JSON MEASURED_JSON RIOPS RBPS: one TSV row (the fields of AU_FIELDS):
#   verdict: pass when predicted AU >= min AU; judged: the measured AU is more than 0.05 from the
#   floor, so the verdict must equal "measured AU >= floor"; agree: it does (or "-" when not judged).
#   bound, ios_per_sample: au_bound's, what the DataLoader's run ran into.
AU_FIELDS="accelerators needed delivered predicted_au sustained limit measured_sps measured_au error verdict judged agree iogate_bps measured_bps bound ios_per_sample"
au_compare() {
  printf '%s\t%s\n' "$(jq -rn --argjson p "$1" --argjson m "$2" '
    ($p.predicted_au >= $p.min_au) as $pass | ($m.au >= $p.min_au) as $mpass |
    (($m.au - $p.min_au) | fabs > 0.05) as $judged |
    [$p.accelerators, $p.samples_per_s_needed, ($p.samples_per_s_delivered | . * 10 | round / 10),
     ($p.predicted_au | . * 1000 | round / 1000), $p.accelerators_sustained, ($p.limit // "-"),
     $m.samples_per_s, $m.au, ($p.predicted_au - $m.au | . * 1000 | round / 1000),
     (if $pass then "pass" else "fail" end), $judged,
     (if $judged then ($pass == $mpass) else "-" end),
     ($p.bytes_per_s // "-" | if type == "number" then round else . end), ($m.bytes / $m.wall_s | round)] | @tsv')" \
    "$(au_bound "$2" "$3" "$4")"
}
