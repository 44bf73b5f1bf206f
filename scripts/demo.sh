#!/usr/bin/env bash
# Installs what is missing, builds the binary alone, and runs a short 4k randread probe of the
# current directory. The console shows install progress and the report: the build's own progress
# goes to a log, printed (and named) only if the build fails.
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
exec "$build_dir/iogate" probe "$here" --size 256m --runtime 5s "$@"
