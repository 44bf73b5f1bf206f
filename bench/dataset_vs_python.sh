#!/usr/bin/env bash
# iogate probe --mode dataset against a plain multi-threaded Python reader (bench/dataset_reader.py)
# and fio --opendir, on the same files, in interleaved rounds.
#
#   bench/dataset_vs_python.sh [DIR] [ROUNDS] [RUNTIME] [WORKERS...]   (defaults: /var/tmp, 3, 5, 1 2 4 8)
#   FILES=20000 MIN_KIB=16 MAX_KIB=200 bench/dataset_vs_python.sh ...
#
# Writes a dataset of FILES files of MIN_KIB–MAX_KIB KiB (real data) under DIR, then per round and
# worker count runs iogate and the Python reader, each from a cold page cache (drop_caches as
# root; otherwise every file is dropped with DONTNEED after it is read, and the first round reads
# files just written: run as root for honest numbers). Both read the whole tree in a shuffled
# order for RUNTIME seconds, and both stat every file before timing (iogate's scan, Python's
# listing), so metadata is warm and data cold for both. fio reads the tree with --opendir, one
# job (with numjobs N each of fio's jobs would read every file, not share them), psync, buffered,
# files one after the other in blocks of MIN_KIB (fio skips a file smaller than its block size, so
# it cannot read a file whole in one read as iogate and Python do; the tail short of a block is
# not read either): its samples/s is its bytes/s over the mean file size, a slight underestimate.
# Prints the median samples/s of each and the ratios iogate/python and iogate/fio; with ROWS=FILE,
# also writes every run there as TSV (workers, tool, samples/s, round) for bench/results.py.
source "$(dirname "$0")/lib.sh"
DIR=${1:-/var/tmp}
ROUNDS=${2:-3}
RUNTIME=${3:-5}
if (($# > 3)); then WORKERS=("${@:4}"); else WORKERS=(1 2 4 8); fi
FILES=${FILES:-20000}
work=$(mktemp -d "$DIR/iogate-dsbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
data="$work/data"
mkdir -p "$data"
echo "writing $FILES files of ${MIN_KIB:-16}-${MAX_KIB:-200} KiB under $data…"
python3 "$bench_root/tests/integration/make_dataset.py" "$data" --files "$FILES" --dirs $((FILES / 100 > 0 ? FILES / 100 : 1)) \
  --subdirs 10 --min-kib "${MIN_KIB:-16}" --max-kib "${MAX_KIB:-200}" --large 0
mean_size=$(find "$data" -type f -printf '%s\n' | awk '{s += $1; n++} END {printf "%.0f", s / n}')
cold() {
  sync
  if [[ $(id -u) -eq 0 ]]; then echo 3 >/proc/sys/vm/drop_caches; fi
}
# iogate opens O_NOATIME where permitted (root, or the files' owner): the reader does the same.
noatime=""
[[ $(id -u) -eq 0 ]] && noatime=--noatime
results="$work/results.tsv"
: >"$results"
for ((round = 1; round <= ROUNDS; round++)); do
  for w in "${WORKERS[@]}"; do
    cold
    io=$("$IOGATE" probe --mode dataset "$data" --workers "$w" --runtime "${RUNTIME}s" --sample "$FILES" \
      --output-format json | jq -r '.loader.samples_per_s')
    cold
    py=$(python3 "$bench_root/bench/dataset_reader.py" "$data" --workers "$w" --runtime "$RUNTIME" --seed "$round" $noatime |
      jq -r '.samples_per_s')
    printf '%s\t%s\t%s\t%s\n' "$w" iogate "$io" "$round" >>"$results"
    printf '%s\t%s\t%s\t%s\n' "$w" python "$py" "$round" >>"$results"
    printf 'round %d  workers %-3d iogate %8.0f  python %8.0f samples/s\n' "$round" "$w" "$io" "$py"
  done
  cold
  fio_bw=$(fio --name=ds --opendir="$data" --ioengine=psync --rw=read --bs="${MIN_KIB:-16}k" --direct=0 --numjobs=1 \
    --file_service_type=sequential --openfiles=1 --runtime="$RUNTIME" --time_based=0 --output-format=json 2>/dev/null |
    sed -n '/^{/,$p' | jq -r '.jobs[0].read.bw_bytes')  # fio prints "opendir added N files" first
  fio_sps=$(awk -v b="$fio_bw" -v m="$mean_size" 'BEGIN {printf "%.1f", b / m}')
  printf '%s\t%s\t%s\t%s\n' 1 fio "$fio_sps" "$round" >>"$results"
  printf 'round %d  workers 1   fio    %8.0f samples/s (bytes/s over the mean file size)\n' "$round" "$fio_sps"
done

[[ -z ${ROWS:-} ]] || cp "$results" "$ROWS"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
pick() { awk -F'\t' -v w="$1" -v t="$2" '$1 == w && $2 == t {print $3}' "$results" | median; }
echo
echo "medians over $ROUNDS rounds, ${RUNTIME} s each, $FILES files, mean $((mean_size / 1024)) KiB, $(nproc) CPUs"
printf '%-8s %12s %12s %12s %10s %10s\n' workers iogate python fio io/python io/fio
for w in "${WORKERS[@]}"; do
  io=$(pick "$w" iogate)
  py=$(pick "$w" python)
  fio_s=$( [[ $w -eq 1 ]] && pick 1 fio || echo "")
  ratio_py=$(awk -v a="$io" -v b="$py" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
  ratio_fio=$( [[ -n "$fio_s" ]] && awk -v a="$io" -v b="$fio_s" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}' || echo "-")
  printf '%-8s %12.0f %12.0f %12s %10s %10s\n' "$w" "$io" "$py" "${fio_s:-"-"}" "$ratio_py" "$ratio_fio"
done
