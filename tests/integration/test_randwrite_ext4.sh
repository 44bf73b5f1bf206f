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
