# Under a pod's memory limit smaller than the test file (an initContainer limited to 128 MiB
# writing a 256 MiB file), the probe's page cache stays bounded: the fill is written back and
# dropped every 16 MiB, so the cgroup never reaches its limit (no reclaim stalls, no OOM kill).
# Uses a child memory cgroup of this process's own (cgroup v1 memory controller, or v2 with the
# memory controller delegated), as the kubelet does for a container.
source "$(dirname "$0")/lib.sh"
need_root "creating a memory cgroup"
limit=$((128 << 20))
mine=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
if [[ -n "$mine" && -f "/sys/fs/cgroup/memory$mine/memory.limit_in_bytes" ]]; then
  cg="/sys/fs/cgroup/memory$mine/iogate-it-$$"
  mkdir "$cg" || skip "cannot create a memory cgroup under /sys/fs/cgroup/memory$mine"
  on_exit "rmdir '$cg'"
  echo "$limit" >"$cg/memory.limit_in_bytes"
  peak_file=memory.max_usage_in_bytes
  limit_hits() { cat "$cg/memory.failcnt"; }
else
  mine=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  parent="/sys/fs/cgroup$mine"
  grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null ||
    skip "no cgroup v1 memory controller and none delegated at $parent (cgroup v2)"
  cg="$parent/iogate-it-$$"
  mkdir "$cg" || skip "cannot create a cgroup under $parent"
  on_exit "rmdir '$cg'"
  [[ -f "$cg/memory.peak" ]] || skip "cgroup v2 without memory.peak (kernel < 5.19)"
  echo "$limit" >"$cg/memory.max"
  peak_file=memory.peak
  limit_hits() { awk '$1 == "max" {print $2}' "$cg/memory.events"; }
fi

dir="$SCRATCH/data"
mkdir -p "$dir"
code=0
sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
  "$IOGATE" probe "$dir" --size 256m --runtime 1s --ramp 200ms --output-format json >"$SCRATCH/r.json" 2>"$SCRATCH/err" || code=$?
[[ $code -eq 0 ]] || fail "probe in a 128 MiB cgroup: exit $code ($(tail -3 "$SCRATCH/err"))"
assert_jq "$SCRATCH/r.json" '.aggregate.read.iops > 0' "the probe measured in a 128 MiB cgroup"
peak=$(cat "$cg/$peak_file")
hits=$(limit_hits)
echo "peak $((peak >> 20)) MiB of a $((limit >> 20)) MiB limit, limit reached $hits times"
((peak < 64 << 20)) || fail "the 256 MiB fill took the cgroup to $((peak >> 20)) MiB (limit $((limit >> 20)) MiB): its page cache is not bounded"
pass "peak memory $((peak >> 20)) MiB, under half the limit, while writing a 256 MiB test file"
[[ "$hits" == 0 ]] || fail "the cgroup hit its limit $hits times"
pass "the cgroup never reached its limit"
assert_no_test_files "$dir"
