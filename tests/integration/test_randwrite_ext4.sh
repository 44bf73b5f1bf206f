# randwrite and randrw with O_DIRECT on ext4.
source "$(dirname "$0")/lib.sh"
out="$SCRATCH/w.json"
quick_probe "$SCRATCH" --rw randwrite >"$out"
assert_jq "$out" '.jobs[0].write.total_ios > 500 and .jobs[0].read.total_ios == 0' "randwrite writes"
assert_jq "$out" '.diskstats.available == false or .diskstats.writes_per_s > 0' "the device saw writes"
assert_no_test_files "$SCRATCH"

quick_probe "$SCRATCH" --rw randrw --rwmixread 70 --numjobs 2 >"$out"
assert_jq "$out" '.jobs | length == 2' "two jobs"
assert_jq "$out" '.aggregate.read.total_ios / (.aggregate.read.total_ios + .aggregate.write.total_ios) | (. > 0.65 and . < 0.75)' "randrw honours --rwmixread 70"
assert_jq "$out" '.aggregate.read.total_ios == (.jobs | map(.read.total_ios) | add)' "aggregate sums the jobs"
assert_no_test_files "$SCRATCH"

quick_probe "$SCRATCH" --rw read --bs 128k >"$out"
assert_jq "$out" '.jobs[0].read.total_ios > 100 and .workload.bs_bytes == 131072' "sequential 128k read"
assert_no_test_files "$SCRATCH"

# A kept test file survives its own write workloads: the writes cover the first block, where the
# marker that allows reuse lives, and the next run must still reuse the file, not refuse it.
kept="$SCRATCH/kept"
mkdir -p "$kept"
for run in 1 2 3; do
  "$IOGATE" probe "$kept" --size 8m --keep-file --rw randwrite --bs 4k --runtime 1s --ramp 0 --output-format json >"$out" ||
    fail "randwrite run $run on the kept file failed"
done
assert_jq "$out" '.target.test_file_reused == true and .jobs[0].write.total_ios > 2048' \
  "a kept file reused after randwrites that covered its first block (2048 blocks, $(jq .jobs[0].write.total_ios "$out") writes)"
rm -rf "$kept"
