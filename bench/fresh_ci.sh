#!/usr/bin/env bash
# What CI costs on a fresh machine, measured on this one: clones the checkout, runs `.ci/run` in
# the clone with nothing cached that the project builds, and prints each phase's time, the
# slowest tests and how busy the CPU was.
#
#   bench/fresh_ci.sh [--keep] [--warm-docker] [CHECKOUT]
#
#   CHECKOUT       the repository to clone (default: this one); its HEAD is what runs
#   --keep         keep the clone, its caches and the full log (default: removed, log kept)
#   --warm-docker  keep the images the tests make (debian:12 from scripts/base-image.sh,
#                  iogate:test); by default both are removed first, as a new engine has neither
#
# Cold: an empty tools cache (IOGATE_TOOLS_CACHE), empty Go build and module caches (GOCACHE,
# GOMODCACHE: every module is downloaded again), ccache off (CCACHE_DISABLE), a new build folder.
# What it cannot make cold: Debian packages already installed (install-deps then finds them; on a
# new machine of this kind they took 62 s, docs/testing.md "CI") and the kernel's page cache.
# Root, as CI; run it on an otherwise idle machine, since other work shares the two cores.
# The log is bench/results/fresh_ci-<time>.log; the summary is printed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=false warm_docker=false checkout=$root
for a in "$@"; do
  case "$a" in
    --keep) keep=true ;;
    --warm-docker) warm_docker=true ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fresh_ci: unknown flag $a (bench/fresh_ci.sh --help)" >&2; exit 2 ;;
    *) checkout=$a ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "fresh_ci: run it as root, as CI runs (loop devices, docker, cgroups)" >&2; exit 2; }

work=$(mktemp -d /var/tmp/iogate-fresh-ci.XXXXXX)
# The Go module cache is read-only files: writable first, so that it can be removed.
$keep || trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$root/bench/results"
log=$root/bench/results/fresh_ci-$(date -u +%Y%m%dT%H%M%SZ).log
git clone -q "$checkout" "$work/clone"
echo "fresh_ci: $(git -C "$work/clone" log -1 --format='%h %s') in $work/clone; log $log"

if ! $warm_docker; then
  if [[ -n "$(docker image inspect -f '{{index .Config.Labels "org.iogate.base"}}' debian:12 2>/dev/null)" ]]; then
    docker rmi -f debian:12 >/dev/null
  fi
  docker rmi -f iogate:test >/dev/null 2>&1 || true
fi

cpu() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
read -r busy0 all0 <<<"$(cpu)"
start=$SECONDS
rc=0
(cd "$work/clone" && env CI=true IOGATE_TOOLS_CACHE="$work/tools" GOCACHE="$work/gocache" \
  GOMODCACHE="$work/gomodcache" CCACHE_DISABLE=1 bash .ci/run) >"$log" 2>&1 || rc=$?
wall=$((SECONDS - start))
read -r busy1 all1 <<<"$(cpu)"

echo "fresh_ci: .ci/run exited $rc after $((wall / 60)) min $((wall % 60)) s"
grep '^test.sh: ' "$log" || true
echo "CPU busy $(awk -v b=$((busy1 - busy0)) -v a=$((all1 - all0)) 'BEGIN { printf "%.0f", 100 * b / a }')% of $(nproc) cores"
echo "the pinned tools (ctest's tools.*):"
grep -E 'Test +#[0-9]+: tools\.' "$log" | sed -E 's/^.*Test +#[0-9]+: ([^ ]+) [. ]*(\**[A-Za-z* ]+) +([0-9.]+) sec.*/  \1 \3 s \2/' || true
echo "the 12 slowest tests:"
grep -E 'Test +#[0-9]+: ' "$log" | sed -E 's/^.*Test +#[0-9]+: ([^ ]+) [. ]*(\**[A-Za-z* ]+) +([0-9.]+) sec.*/\3 \1 \2/' |
  sort -rn | head -12 | awk '{ printf "  %-32s %6.0f s %s\n", $2, $1, $3 }'
sed -n '/^Label Time Summary:/,/^$/p' "$log"
grep -E 'tests passed|tests failed' "$log" || true
exit $rc
