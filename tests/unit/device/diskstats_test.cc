#include "device/diskstats.h"

#include <doctest/doctest.h>

#include <cmath>

#include "device/mountinfo.h"
#include "temp_tree.h"

using namespace iogate;

namespace {

// 14 fields (kernels before 4.18), 18 (4.18 to 5.4: discards), 20 (5.5 on: flushes), as printed.
constexpr const char* kFields14 =
    "   8       0 sda 2389445 98354 153474354 1726144 1392583 1480573 84936016 5143972 0 1518268 6874184\n"
    "   8       1 sda1 2389168 98354 153466106 1726044 1392576 1480573 84936016 5143968 0 1518228 6874080\n";
constexpr const char* kFields18 =
    " 259       0 nvme0n1 7204021 4193 651733738 1354712 9132264 3925418 438237632 8213260 3 3276548 9578372 61082 0 "
    "1164853928 10400\n";
constexpr const char* kFields20 =
    "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 254       0 vda 33462 7907 2393578 10918 21338 8151 942960 4997 0 9144 17210 4682 9 151720 820 1021 474\n"
    " 254       1 vda1 33100 7907 2380000 10800 21338 8151 942960 4997 0 9100 15797 4682 9 151720 820 0 0\n"
    " 253       0 dm-0 120773 0 7291586 86444 299127 0 6196384 1412296 0 257616 1498740 0 0 0 0 0 0\n";

DiskStats sample(uint64_t reads, uint64_t sectors_r, uint64_t read_ms, uint64_t writes, uint64_t sectors_w,
                 uint64_t write_ms, uint64_t io_ms, uint64_t queue_ms) {
  DiskStats d;
  d.major = 259;
  d.name = "nvme0n1";
  d.reads_completed = reads;
  d.sectors_read = sectors_r;
  d.read_ticks_ms = read_ms;
  d.writes_completed = writes;
  d.sectors_written = sectors_w;
  d.write_ticks_ms = write_ms;
  d.io_ticks_ms = io_ms;
  d.time_in_queue_ms = queue_ms;
  return d;
}

}  // namespace

TEST_CASE("diskstats with 14 fields: the 11 classic counters, discards and flushes 0") {
  auto d = parse_diskstats(kFields14);
  REQUIRE(d.size() == 2);
  CHECK(d[0].major == 8);
  CHECK(d[0].minor == 0);
  CHECK(d[0].name == "sda");
  CHECK(d[0].reads_completed == 2389445);
  CHECK(d[0].reads_merged == 98354);
  CHECK(d[0].sectors_read == 153474354);
  CHECK(d[0].read_ticks_ms == 1726144);
  CHECK(d[0].writes_completed == 1392583);
  CHECK(d[0].writes_merged == 1480573);
  CHECK(d[0].sectors_written == 84936016);
  CHECK(d[0].write_ticks_ms == 5143972);
  CHECK(d[0].in_flight == 0);
  CHECK(d[0].io_ticks_ms == 1518268);
  CHECK(d[0].time_in_queue_ms == 6874184);
  CHECK(d[0].discards_completed == 0);
  CHECK(d[0].flushes_completed == 0);
  CHECK(d[1].name == "sda1");
  CHECK(d[1].minor == 1);
}

TEST_CASE("diskstats with 18 fields adds discards") {
  auto d = parse_diskstats(kFields18);
  REQUIRE(d.size() == 1);
  CHECK(d[0].name == "nvme0n1");
  CHECK(d[0].major == 259);
  CHECK(d[0].in_flight == 3);
  CHECK(d[0].time_in_queue_ms == 9578372);
  CHECK(d[0].discards_completed == 61082);
  CHECK(d[0].discards_merged == 0);
  CHECK(d[0].sectors_discarded == 1164853928);
  CHECK(d[0].discard_ticks_ms == 10400);
  CHECK(d[0].flushes_completed == 0);
  CHECK(d[0].flush_ticks_ms == 0);
}

TEST_CASE("diskstats with 20 fields adds flushes") {
  auto d = parse_diskstats(kFields20);
  REQUIRE(d.size() == 4);
  CHECK(d[0].name == "loop0");
  CHECK(d[0].reads_completed == 0);
  const DiskStats& vda = d[1];
  CHECK(vda.major == 254);
  CHECK(vda.minor == 0);
  CHECK(vda.reads_completed == 33462);
  CHECK(vda.write_ticks_ms == 4997);
  CHECK(vda.io_ticks_ms == 9144);
  CHECK(vda.time_in_queue_ms == 17210);
  CHECK(vda.discards_completed == 4682);
  CHECK(vda.discards_merged == 9);
  CHECK(vda.sectors_discarded == 151720);
  CHECK(vda.discard_ticks_ms == 820);
  CHECK(vda.flushes_completed == 1021);
  CHECK(vda.flush_ticks_ms == 474);
  CHECK(d[3].name == "dm-0");
  CHECK(d[3].sectors_written == 6196384);
}

TEST_CASE("diskstats: short, non-numeric and blank lines are skipped; extra fields ignored") {
  auto d = parse_diskstats(
      "\n"
      "   8       0 sda 1 2 3 4 5 6 7 8 0 9\n"                                // 13 fields
      "   8      x1 sdb 1 2 3 4 5 6 7 8 0 9 10\n"                             // bad minor
      "   8      32 sdc 1 2 3 4 5 6 7 8 0 9 -10\n"                            // negative counter
      "   8      48 sdd 1 2 3 4 5 6 7 8 0 9 10 11 12 13 14 15 16 17 18 19\n"  // a future kernel's 23 fields
      "\t8\t64\tsde 1 2 3 4 5 6 7 8 0 9 10");                                 // tabs, no final newline
  REQUIRE(d.size() == 2);
  CHECK(d[0].name == "sdd");
  CHECK(d[0].flushes_completed == 15);
  CHECK(d[0].flush_ticks_ms == 16);  // 17, 18, 19 are beyond what we know
  CHECK(d[1].name == "sde");
  CHECK(d[1].time_in_queue_ms == 10);
}

TEST_CASE("read_diskstats_for finds one device and names it when absent") {
  testing::TempTree tree;
  REQUIRE_FALSE(tree.root.empty());
  tree.write("diskstats", kFields20);
  auto vda1 = read_diskstats_for(254, 1, tree.root.string());
  REQUIRE(vda1.ok());
  CHECK(vda1->name == "vda1");
  CHECK(vda1->reads_completed == 33100);
  auto missing = read_diskstats_for(0, 42, tree.root.string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("0:42") != std::string::npos);
  auto no_file = read_diskstats_for(254, 0, (tree.root / "absent").string());
  REQUIRE_FALSE(no_file.ok());
  CHECK(no_file.error().os_errno == ENOENT);
}

TEST_CASE("iostat_between: rates, await, utilisation and queue size") {
  // 2 s apart: 1000 reads of 4 KiB taking 500 ms in all, 200 writes of 64 KiB taking 1 s in all.
  DiskStats before = sample(10000, 80000, 4000, 500, 64000, 2000, 50000, 90000);
  DiskStats after = sample(11000, 88000, 4500, 700, 89600, 3000, 51500, 93000);
  IostatFigures f = iostat_between(before, after, 2.0);
  CHECK(f.reads_per_s == doctest::Approx(500));
  CHECK(f.writes_per_s == doctest::Approx(100));
  CHECK(f.read_bytes_per_s == doctest::Approx(8000.0 * 512 / 2));  // 2 MB/s: 500/s * 4 KiB
  CHECK(f.write_bytes_per_s == doctest::Approx(25600.0 * 512 / 2));
  CHECK(f.r_await_ns == doctest::Approx(500e3));  // 0.5 ms
  CHECK(f.w_await_ns == doctest::Approx(5e6));    // 5 ms
  CHECK(f.util_percent == doctest::Approx(75));
  CHECK(f.avg_queue_size == doctest::Approx(1.5));
}

TEST_CASE("iostat_between: no I/O gives zero await; utilisation is clamped to 100") {
  DiskStats before = sample(100, 800, 40, 10, 80, 20, 1000, 2000);
  DiskStats idle = before;
  IostatFigures f = iostat_between(before, idle, 1.0);
  CHECK(f.reads_per_s == 0);
  CHECK(f.r_await_ns == 0);
  CHECK(f.w_await_ns == 0);
  CHECK(f.util_percent == 0);
  DiskStats busy = before;
  busy.io_ticks_ms += 1013;  // io_ticks a little ahead of the wall clock between two reads
  busy.reads_completed += 1;
  busy.read_ticks_ms += 2;
  f = iostat_between(before, busy, 1.0);
  CHECK(f.util_percent == 100);
  CHECK(f.r_await_ns == doctest::Approx(2e6));
}

TEST_CASE("iostat_between: a counter that went backwards gives zeros for what is built on it") {
  DiskStats before = sample(4000000000, 80000, 4294967000, 500, 64000, 2000, 50000, 90000);
  // The device was re-created (counters reset) for reads; the 32-bit read ticks wrapped.
  DiskStats after = sample(120, 960, 200, 700, 89600, 3000, 51000, 91000);
  IostatFigures f = iostat_between(before, after, 1.0);
  CHECK(f.reads_per_s == 0);
  CHECK(f.read_bytes_per_s == 0);
  CHECK(f.r_await_ns == 0);
  CHECK(std::isfinite(f.r_await_ns));
  // Fields that moved forward are still reported.
  CHECK(f.writes_per_s == doctest::Approx(200));
  CHECK(f.w_await_ns == doctest::Approx(5e6));
  CHECK(f.util_percent == doctest::Approx(100));
  CHECK(f.avg_queue_size == doctest::Approx(1.0));
  // Ticks went backwards while completions moved forward: await 0, not a 64-bit wraparound.
  DiskStats ticks_back = after;
  ticks_back.writes_completed += 10;
  ticks_back.write_ticks_ms = 10;
  CHECK(iostat_between(after, ticks_back, 1.0).w_await_ns == 0);
}

TEST_CASE("iostat_between: a zero, negative or NaN interval gives all zeros") {
  DiskStats before = sample(0, 0, 0, 0, 0, 0, 0, 0);
  DiskStats after = sample(100, 800, 50, 100, 800, 50, 500, 900);
  for (double interval : {0.0, -1.0, std::nan("")}) {
    IostatFigures f = iostat_between(before, after, interval);
    CHECK(f.reads_per_s == 0);
    CHECK(f.write_bytes_per_s == 0);
    CHECK(f.util_percent == 0);
    CHECK(f.avg_queue_size == 0);
  }
}

TEST_CASE("live: this machine's diskstats for the root file system's device") {
  auto mounts = read_mountinfo();
  REQUIRE(mounts.ok());
  const MountEntry* root = find_mount_for_path(*mounts, "/");
  REQUIRE(root != nullptr);
  if (root->major == 0) {
    MESSAGE("/ is " << root->fs_type << " on " << root->major << ":" << root->minor
                    << ", a pseudo-device without diskstats: only the absence is checked");
    auto none = read_diskstats_for(root->major, root->minor);
    CHECK_FALSE(none.ok());
    return;
  }
  auto before = read_diskstats_for(root->major, root->minor);
  REQUIRE(before.ok());
  CHECK_FALSE(before->name.empty());
  CHECK(before->major == root->major);
  CHECK(before->minor == root->minor);
  // The root device has served at least the reads that loaded this test binary's libraries.
  CHECK(before->reads_completed + before->writes_completed > 0);
  auto after = read_diskstats_for(root->major, root->minor);
  REQUIRE(after.ok());
  CHECK(after->reads_completed >= before->reads_completed);
  CHECK(after->io_ticks_ms >= before->io_ticks_ms);
  IostatFigures f = iostat_between(*before, *after, 0.001);
  CHECK(f.util_percent >= 0);
  CHECK(f.util_percent <= 100);
  CHECK(std::isfinite(f.r_await_ns));
  CHECK(std::isfinite(f.avg_queue_size));
}
