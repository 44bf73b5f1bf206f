# iogate's verdict for shard streams against a real PyTorch DataLoader (issue 46): WebDataset-style
# tar shards (16 MiB, 256 records of 64 KiB each) on a rig volume capped at 40 MB/s of reads; the
# DataLoader (tests/lib/dataloader_au.py --shards: an IterableDataset, each of 2 workers streaming
# its own shards with tarfile, the accelerators emulated by MLPerf Storage's sleep per step) feeds
# N accelerators of 250 records/s each. iogate predicts with a demand rule that states the shard
# shape (shard_size): over the real shards (recognised by their .tar names, read whole by the
# loader's workers, records/s = bytes/s over the record) and, from an empty directory on the same
# volume, over synthetic shards (one sequential reader per worker). The verdict (predicted AU >= 0.90)
# must equal the DataLoader's and the prediction be within 0.10 of it (bench/au_grid.sh's goal is
# 0.05), for 1 accelerator (AU 1: pass) and 4 (AU ~0.6: fail).
source "$(dirname "$0")/lib.sh"
use_rig
need_tool jq
need_tool numfmt
source "$TESTS_DIR/lib/au_volumes.sh"
au_check_torch || fail "$(au_check_torch)"
AU_SHARDS=16m
AU_SAMPLE_SIZE=64k
AU_BATCH=64
rbps=40000000

au_volume_up shards "" "$rbps" 512m 24 || fail "tests/lib/rig.sh up shards and its tar shards"
data=$(rig_dir shards)/data
empty=$(rig_dir shards)/empty
mkdir -p "$empty"
for n in 1 4; do
  # The real shards, then synthetic ones (an empty directory on the same volume), judged against one
  # DataLoader run (a second where the first lands within 0.05 of the floor).
  p_shards=$(au_predict shards "$data" "$n" 3s) || fail "shards, $n accelerators: iogate gave no prediction"
  p_synthetic=$(au_predict shards "$empty" "$n" 3s) || fail "synthetic, $n accelerators: iogate gave no prediction"
  for try in 1 2; do
    m=$(au_measure shards "$data" "$n" 8) || fail "$n accelerators: the DataLoader failed"
    judged=$(jq -r --argjson min "$AU_MIN" '(.au - $min) | fabs > 0.05' <<<"$m")
    [[ $judged == true ]] && break
    echo "note: $n accelerators: the DataLoader's AU $(jq .au <<<"$m") is within 0.05 of the floor $AU_MIN (try $try)"
  done
  for source in shards synthetic; do
    p=$p_shards
    [[ $source == synthetic ]] && p=$p_synthetic
    IFS=$'\t' read -r -a f <<<"$(au_compare "$p" "$m" "" "$rbps")"
    what="$source, $n accelerators: iogate ${f[2]} records/s, predicted AU ${f[3]} (${f[9]}); DataLoader"
    what+=" ${f[6]} records/s over tar shards, measured AU ${f[7]}"
    [[ ${f[10]} == true ]] || fail "$what: within 0.05 of the floor; the case is meant to be clear of it"
    [[ ${f[11]} == true ]] || fail "$what: the verdict disagrees with the DataLoader"
    awk -v e="${f[8]}" 'BEGIN {exit !(e <= 0.10 && e >= -0.10)}' || fail "$what: prediction off by ${f[8]} (more than 0.10)"
    pass "$what: verdict agrees, error ${f[8]}"
  done
done
assert_no_test_files "$(rig_dir shards)"
