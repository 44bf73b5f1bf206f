# iogate's checkpoint verdict against a real PyTorch save (issue 46): on a rig volume capped at
# 50 MB/s of writes and 100 MB/s of reads, writeback included (tests/lib/checkpoint_volumes.sh),
# iogate predicts the save and restore of a checkpoint from N ranks, and tests/lib/checkpoint_torch.py
# measures them: N processes each torch.save a state dict to its own file and fsync, the slowest
# rank's time (MLPerf Storage's), then torch.load after the files are dropped from the page cache.
# The prediction must be within 15% of the real save and restore, and the verdict (stall = save /
# interval <= 5%) must equal the real stall's, in two cases far from the budget: 2 ranks x 128 MiB
# every minute (a stall of ~9%: fail) and 8 ranks x 16 MiB every 3 minutes (~1.5%: pass).
# bench/checkpoint_grid.sh measures the wider grid.
source "$(dirname "$0")/lib.sh"
use_rig
need_tool jq
"${CK_PY:-/usr/bin/python3}" -c 'import torch' 2>/dev/null ||
  fail "PyTorch is missing for /usr/bin/python3: apt-get install python3-torch (bash scripts/install-deps.sh)"
source "$TESTS_DIR/lib/checkpoint_volumes.sh"

ck_volume_up ckpt 512m || fail "tests/lib/rig.sh up ckpt --writeback"
dir=$(rig_dir ckpt)
for spec in 2:134217728:60 8:16777216:180; do
  IFS=: read -r ranks rank_bytes interval <<<"$spec"
  p=$(ck_predict "$dir" "$ranks" $((ranks * rank_bytes)) "${interval}s") ||
    fail "$ranks ranks: iogate gave no checkpoint prediction"
  m=$(ck_measure "$dir" "$ranks" "$rank_bytes") || fail "$ranks ranks: the PyTorch save failed"
  IFS=$'\t' read -r -a f <<<"$(ck_compare "$p" "$m" "$interval")"
  # CK_FIELDS: ranks rank_bytes predicted_save measured_save save_error predicted_restore
  # measured_restore restore_error predicted_stall measured_stall verdict judged agree verdict_s
  what="$ranks ranks x $((rank_bytes >> 20)) MiB every ${interval}s: save predicted ${f[2]} s, torch.save ${f[3]} s"
  what+=" (${f[4]}); restore ${f[5]} s, torch.load ${f[6]} s (${f[7]}); stall ${f[8]} predicted, ${f[9]} measured"
  awk -v e="${f[4]}" 'BEGIN {exit !(e <= 0.15 && e >= -0.15)}' || fail "$what: the save is off by more than 15%"
  awk -v e="${f[7]}" 'BEGIN {exit !(e <= 0.15 && e >= -0.15)}' || fail "$what: the restore is off by more than 15%"
  [[ ${f[11]} == true ]] || fail "$what: within 10% of the budget $CK_MAX_STALL; the case is meant to be clear of it"
  [[ ${f[12]} == true ]] || fail "$what: the verdict (${f[10]}) disagrees with the real save's stall"
  pass "$what: verdict ${f[10]} agrees, in ${f[13]} s"
done
# The checkpoint probe on its own, as fio users run a job: its save line is the volume's cap.
"$IOGATE" probe --mode checkpoint "$dir" --numjobs 4 --size 64m --output-format json >"$SCRATCH/probe.json" ||
  fail "iogate probe --mode checkpoint failed"
assert_jq "$SCRATCH/probe.json" '.mode == "checkpoint" and .ranks == 4 and (.saves | length) >= 2 and
  (.save.bytes_per_s / '"$CK_WBPS"' | . > 0.85 and . < 1.15) and (.restore.bytes_per_s / '"$CK_RBPS"' | . > 0.85 and . < 1.15)' \
  "iogate probe --mode checkpoint: 4 ranks save at the volume's write cap and restore at its read cap, within 15%"

# SIGTERM in the middle of a save: the run ends at once and its rank files go with it.
policy="$SCRATCH/ck.yaml"
printf '%s\n' 'apiVersion: iogate.io/v1' 'kind: StoragePolicy' 'mode: enforce' 'rules:' \
  '  - {name: save, demand: {checkpoint: {size: 2g, interval: 30m}}}' >"$policy"
"$IOGATE" preflight "$dir" --policy "$policy" --gpus 4 --no-api >/dev/null 2>"$SCRATCH/term.err" &
pid=$!
for _ in $(seq 100); do [[ -n $(find "$dir" -name '.iogate-probe-checkpoint-*' -print -quit) ]] && break; sleep 0.05; done
[[ -n $(find "$dir" -name '.iogate-probe-checkpoint-*' -print -quit) ]] || fail "no rank file appeared within 5 s"
sleep 0.5
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
((code != 0)) && grep -q "interrupted" "$SCRATCH/term.err" ||
  fail "preflight after SIGTERM in the middle of a save: exit $code, $(tail -n 3 "$SCRATCH/term.err")"
assert_no_test_files "$dir"
pass "SIGTERM in the middle of a save: exit $code, no rank file left"
[[ -z $(find "$dir" -name '.ckpt-torch-*' -print -quit) ]] || fail "the PyTorch client left its files in $dir"
pass "no checkpoint file left behind"
