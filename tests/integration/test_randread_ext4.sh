# 4k randread with O_DIRECT on a real ext4 directory: fio-shaped JSON, real device reads.
source "$(dirname "$0")/lib.sh"
fs=$(stat -f -c %T "$SCRATCH")
[[ "$fs" == ext2/ext3 || "$fs" == ext4 ]] || skip "$SCRATCH is on $fs, not ext4"
out="$SCRATCH/report.json"
quick_probe "$SCRATCH" --seed 12345 >"$out"
assert_jq "$out" '.schema == "iogate.report/v1"' "schema is iogate.report/v1"
assert_jq "$out" '.ioengine == "libaio" and .direct == true' "libaio with O_DIRECT"
assert_jq "$out" '.workload.rw == "randread" and .workload.bs_bytes == 4096 and .workload.iodepth == 32' "workload echoed"
assert_jq "$out" '.workload.seed == 12345' "the given seed is reported"
assert_jq "$out" '.jobs | length == 1' "one job"
assert_jq "$out" '.jobs[0].read.total_ios > 1000 and .jobs[0].read.iops > 0' "reads were measured"
assert_jq "$out" '.jobs[0].write.total_ios == 0' "randread writes nothing in the window"
assert_jq "$out" '.jobs[0].read.io_bytes == .jobs[0].read.total_ios * 4096' "io_bytes = total_ios × bs"
assert_jq "$out" '.jobs[0].read.clat_ns.percentile | has("99.000000") and has("99.990000") and has("1.000000")' "fio-style percentile keys"
assert_jq "$out" '.jobs[0].read.clat_ns as $c | $c.min <= $c.percentile["50.000000"] and $c.percentile["50.000000"] <= $c.percentile["99.000000"] and $c.percentile["99.000000"] <= $c.max' "percentiles are ordered"
assert_jq "$out" '(.jobs[0].iops_timeline | length) >= 2' "a per-second timeline"
assert_jq "$out" '.target.test_file_created == true and .target.read_only == false' "a test file was created"
assert_jq "$out" '.cpu.ns_per_io > 0' "CPU per I/O measured"
# O_DIRECT means the device saw the reads: its diskstats count at least ~all of ours.
assert_jq "$out" '.diskstats.available == false or (.diskstats.reads_per_s * .diskstats.interval_ns / 1e9 >= 0.9 * .aggregate.read.total_ios)' "the device saw the reads (not the page cache)"
assert_no_test_files "$SCRATCH"

# Human output: the headline and the sparkline.
human=$("$IOGATE" probe "$SCRATCH" --size 16m --runtime 1s --ramp 0)
grep -q "IOPS" <<<"$human" || fail "human output lacks IOPS: $human"
pass "human output has the headline"
assert_no_test_files "$SCRATCH"

# Buffered I/O: real concurrency from iodepth threads (psync), and the report says so.
quick_probe "$SCRATCH" --direct=0 --iodepth 8 >"$out"
assert_jq "$out" '.ioengine == "psync" and .direct == false and .workload.direct == false' "buffered run uses the psync engine"
assert_jq "$out" '.jobs[0].read.total_ios > 1000' "buffered reads measured"
assert_jq "$out" '[.warnings[] | test("buffered")] | any' "a warning says buffered"
assert_jq "$out" '.jobs[0].submit_calls >= .jobs[0].read.total_ios' "one pread per I/O"
assert_no_test_files "$SCRATCH"
