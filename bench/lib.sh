# Shared by the bench scripts: the iogate binary, a scratch directory removed on exit, the test
# file iogate writes (and fio then reads too, so both measure the same blocks), and fio runs.
set -euo pipefail
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IOGATE=${IOGATE:-$bench_root/build/iogate}
command -v fio >/dev/null || { echo "fio is not installed (bash scripts/install-deps.sh)"; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (bash scripts/install-deps.sh)"; exit 2; }
[[ -x "$IOGATE" ]] || { echo "build iogate first: bash scripts/build.sh"; exit 2; }

# bench_make_file DIR SIZE: sets $work (a scratch directory under DIR, removed on exit) and $file
# (a SIZE test file iogate wrote there: preallocated, incompressible, kept for the runs).
bench_make_file() {
  work=$(mktemp -d "$1/iogate-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  "$IOGATE" probe "$work" --size "$2" --keep-file --runtime 200ms --ramp 0 >/dev/null
  file=$(ls "$work"/.iogate-probe-*.dat)
}

# fio_json [fio options]: fio on $file with libaio, O_DIRECT, a cold page cache and a fresh
# random sequence each run, time-based; prints fio's JSON.
fio_json() {
  fio --name=bench --filename="$file" --ioengine=libaio --direct=1 --time_based --invalidate=1 --randrepeat=0 \
    --output-format=json "$@" 2>/dev/null
}
