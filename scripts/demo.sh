#!/usr/bin/env bash
# Installs what is missing, builds the binary alone, runs a short 4k randread probe of the current
# directory (the seed's headline figure), then the verdict iogate exists for: a small ImageNet-like
# dataset (2,000 JPEG-sized files, 110 KB on average) written beside it, judged by `iogate
# preflight` with the default profile (image-training: predicted accelerator utilisation) for 1
# and for 8 GPUs. The console shows install progress and the reports: the build's own progress
# goes to a log, printed (and named) only if the build fails. The dataset is removed on exit,
# also on Ctrl-C and SIGTERM. Arguments go to the probe.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --build-only
build_dir=${BUILD_DIR:-build}
mkdir -p "$build_dir"
log="$(cd "$build_dir" && pwd)/demo-build.log"
if ! BUILD_DIR="$build_dir" bash scripts/build.sh iogate >"$log" 2>&1; then
  cat "$log" >&2
  echo "demo: the build failed; its output is above and in $log" >&2
  exit 1
fi
iogate="$build_dir/iogate"
"$iogate" probe "$here" --size 256m --runtime 5s "$@"

data=$(mktemp -d "$here/iogate-demo-dataset.XXXXXX")
trap 'rm -rf "$data"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo
echo "demo: writing an ImageNet-like dataset (2,000 files, 20-200 KB) to $data ..."
python3 tests/integration/make_dataset.py "$data" --files 2000 --dirs 20 --subdirs 4 --min-kib 20 --max-kib 200 \
  --large 0 >/dev/null
sync -f "$data"
for gpus in 1 8; do
  echo
  # The default policy: profile image-training in mode warn (it exits 0 and says what enforce
  # would block); --no-api: judged here, outside a cluster.
  "$iogate" preflight "$data" --gpus "$gpus" --no-api --log-level warn
done
