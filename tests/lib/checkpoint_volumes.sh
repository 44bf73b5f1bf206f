# The checkpoint proof, shared by bench/checkpoint_grid.sh and
# tests/integration/test_checkpoint_verdict.sh: a rig volume capped in write and read bandwidth in
# a way that holds for buffered writes and their writeback (rig.sh --writeback), iogate's predicted
# save and restore (`iogate preflight` with a checkpoint rule: the verdict's checkpoint check), and
# a real PyTorch save and restore (tests/lib/checkpoint_torch.py) of the same size from the same
# ranks on the same volume. Sourced after tests/lib/rig.sh; needs $IOGATE, jq and Debian's
# python3-torch (/usr/bin/python3).
#
# Scale: a volume writing 500 MB/s and reading 1 GB/s, every rate x0.1, so a small client (its
# ranks' serialisation on a couple of cores) is not the limit; a save's time is bytes over rate,
# so the stall scales with both.

CK_WBPS=${CK_WBPS:-50000000}
CK_RBPS=${CK_RBPS:-100000000}
CK_SCALE_NOTE="a 500 MB/s write, 1 GB/s read volume, every rate x0.1"
CK_MAX_STALL=${CK_MAX_STALL:-0.05}
CK_PY=${CK_PY:-/usr/bin/python3}
_ck_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ck_volume_up NAME SIZE: a tmpfs-backed rig with the caps on every write and read to it.
ck_volume_up() {
  rig_up "$1" --backing tmpfs --wbps "$CK_WBPS" --rbps "$CK_RBPS" --writeback --size "$2" >/dev/null
}

# ck_predict DIR RANKS POD_BYTES INTERVAL: iogate's checkpoint check for a pod of RANKS GPUs saving
# POD_BYTES every INTERVAL, as one JSON object: {save_seconds, restore_seconds, stall_fraction,
# max_stall, passed, ..., verdict_s (wall seconds to the verdict)}.
ck_predict() {
  local dir=$1 ranks=$2 bytes=$3 interval=$4 policy out rc=0 t0
  policy=$(mktemp "${TMPDIR:-/tmp}/ck-policy.XXXXXX.yaml")
  cat >"$policy" <<YAML
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
rules:
  - name: checkpoint
    demand: {checkpoint: {size: $bytes, interval: $interval, max_stall: $CK_MAX_STALL}}
YAML
  t0=$(date +%s.%N)
  out=$("$IOGATE" preflight "$dir" --policy "$policy" --gpus "$ranks" --no-api --output-format json 2>"$policy.log") ||
    rc=$?
  ((rc <= 1)) || { cat "$policy.log" >&2; rm -f "$policy" "$policy.log"; return "$rc"; }
  rm -f "$policy" "$policy.log"
  jq -c --argjson t "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')" \
    '[.. | objects | select(has("save_seconds"))][0] // error("no checkpoint check in the verdict") | . + {verdict_s: $t}' \
    <<<"$out"
}

# ck_measure DIR RANKS RANK_BYTES: the real save's and restore's JSON line (checkpoint_torch.py).
ck_measure() {
  "$CK_PY" "$_ck_here/checkpoint_torch.py" "$1" --ranks "$2" --rank-bytes "$3" --restore
}

# ck_compare PREDICTED MEASURED INTERVAL_S: one TSV row of CK_FIELDS. save_error and
# restore_error are (predicted - measured) / measured; judged: the measured stall is more than 10%
# of the budget from it, so the verdict must equal "measured stall <= budget"; agree: it does
# ("-" when not judged).
CK_FIELDS="ranks rank_bytes predicted_save measured_save save_error predicted_restore measured_restore restore_error predicted_stall measured_stall verdict judged agree verdict_s"
ck_compare() {
  jq -rn --argjson p "$1" --argjson m "$2" --argjson i "$3" '
    ($m.save_seconds / $i) as $stall | ($stall <= $p.max_stall) as $mpass |
    ((($stall - $p.max_stall) | fabs) > 0.1 * $p.max_stall) as $judged |
    def r3: . * 1000 | round / 1000;
    [$p.ranks, $p.rank_bytes, ($p.save_seconds | r3), $m.save_seconds,
     (($p.save_seconds - $m.save_seconds) / $m.save_seconds | r3),
     ($p.restore_seconds // 0 | r3), $m.restore_seconds,
     ((($p.restore_seconds // 0) - $m.restore_seconds) / $m.restore_seconds | r3),
     ($p.stall_fraction | r3), ($stall | r3),
     (if $p.passed then "pass" else "fail" end), $judged,
     (if $judged then ($p.passed == $mpass) else "-" end), ($p.verdict_s | . * 10 | round / 10)] | @tsv'
}
