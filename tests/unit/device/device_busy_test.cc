#include "device/device_busy.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "temp_tree.h"

using namespace iogate;

namespace {

StackNode node(std::string name, StackNodeKind kind, std::vector<StackNode> children = {}) {
  StackNode n;
  n.name = std::move(name);
  n.kind = kind;
  n.children = std::move(children);
  return n;
}

StorageStack stack_on(uint32_t major, uint32_t minor, std::string fs_type, std::vector<StackNode> nodes) {
  StorageStack s;
  s.path = "/data";
  s.mount.major = major;
  s.mount.minor = minor;
  s.mount.fs_type = std::move(fs_type);
  s.stack = std::move(nodes);
  return s;
}

DiskStats line(uint32_t major, uint32_t minor, std::string name) {
  DiskStats d;
  d.major = major;
  d.minor = minor;
  d.name = std::move(name);
  return d;
}

// A /proc/diskstats line (20 fields) with the given io_ticks and everything else fixed.
std::string diskstats_line(uint32_t major, uint32_t minor, const std::string& name, uint64_t io_ticks_ms) {
  return fmt::format("{:4} {:7} {} 100 0 800 50 200 0 1600 90 0 {} 140 0 0 0 0 0 0\n", major, minor, name, io_ticks_ms);
}

// Replaces the file whole, as the kernel's view of it changes between two reads: a reader sees
// the old text or the new one, never a truncated file.
void replace_file(const iogate::testing::TempTree& tree, const std::string& rel, const std::string& text) {
  tree.write(rel + ".new", text);
  std::filesystem::rename(tree.path(rel + ".new"), tree.path(rel));
}

}  // namespace

TEST_CASE("devices_to_watch: a partition, then the disk under it") {
  auto s = stack_on(254, 1, "ext4", {node("vda1", StackNodeKind::kPartition, {node("vda", StackNodeKind::kDisk)})});
  std::vector<DiskStats> stats = {line(254, 0, "vda"), line(254, 1, "vda1")};
  CHECK(devices_to_watch(s, stats) == std::vector<std::string>{"vda1", "vda"});
}

TEST_CASE("devices_to_watch: a dm device over two disks, each once") {
  auto s = stack_on(
      253, 0, "xfs",
      {node("dm-0", StackNodeKind::kLvm, {node("vdb", StackNodeKind::kDisk), node("vdc", StackNodeKind::kDisk)})});
  std::vector<DiskStats> stats = {line(254, 16, "vdb"), line(254, 32, "vdc"), line(253, 0, "dm-0")};
  CHECK(devices_to_watch(s, stats) == std::vector<std::string>{"dm-0", "vdb", "vdc"});
}

TEST_CASE("devices_to_watch: the mount's device comes first even when the stack lists it elsewhere") {
  // A stack as walked from the leaves would be unusual, but the contract puts MAJ:MIN first.
  auto s = stack_on(253, 0, "ext4", {node("vdb", StackNodeKind::kDisk), node("dm-0", StackNodeKind::kDmLinear)});
  std::vector<DiskStats> stats = {line(254, 16, "vdb"), line(253, 0, "dm-0")};
  CHECK(devices_to_watch(s, stats) == std::vector<std::string>{"dm-0", "vdb"});
}

TEST_CASE("devices_to_watch: a loop device skips its backing file but not the disk that holds it") {
  auto s = stack_on(7, 0, "ext4",
                    {node("loop0", StackNodeKind::kLoop,
                          {node("/var/lib/images/x.img", StackNodeKind::kFile,
                                {node("vda1", StackNodeKind::kPartition, {node("vda", StackNodeKind::kDisk)})})})});
  std::vector<DiskStats> stats = {line(254, 0, "vda"), line(254, 1, "vda1"), line(7, 0, "loop0")};
  CHECK(devices_to_watch(s, stats) == std::vector<std::string>{"loop0", "vda1", "vda"});
}

TEST_CASE("devices_to_watch: nfs has no device; sampling says so instead of calling it idle") {
  auto s = stack_on(0, 53, "nfs4", {});
  std::vector<DiskStats> stats = {line(254, 0, "vda")};
  CHECK(devices_to_watch(s, stats).empty());

  iogate::testing::TempTree proc;
  proc.write("diskstats", diskstats_line(254, 0, "vda", 1000));
  std::atomic<bool> stop{false};
  auto sample = sample_device_busy(s, std::chrono::milliseconds(5000), proc.root.string(), stop);
  REQUIRE(sample.ok());
  CHECK_FALSE(sample->measurable);
  CHECK(sample->why_not == "nfs4 has no block device");
  CHECK(sample->devices.empty());
  CHECK(sample->window_s == 0);  // no device to wait for: no wait
}

TEST_CASE("sample_device_busy: util from io_ticks over the real window; the busiest leaf decides") {
  iogate::testing::TempTree proc;
  proc.write("diskstats", diskstats_line(253, 0, "dm-0", 5000) + diskstats_line(254, 16, "vdb", 7000) +
                              diskstats_line(254, 32, "vdc", 9000));
  auto s = stack_on(
      253, 0, "xfs",
      {node("dm-0", StackNodeKind::kLvm, {node("vdb", StackNodeKind::kDisk), node("vdc", StackNodeKind::kDisk)})});
  // dm-0 +300 ms, vdb +100 ms, vdc +800 ms of busy time during a ~1 s window.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    replace_file(proc, "diskstats",
                 diskstats_line(253, 0, "dm-0", 5300) + diskstats_line(254, 16, "vdb", 7100) +
                     diskstats_line(254, 32, "vdc", 9800));
  });
  std::atomic<bool> stop{false};
  auto sample = sample_device_busy(s, std::chrono::milliseconds(1000), proc.root.string(), stop);
  writer.join();
  REQUIRE(sample.ok());
  REQUIRE(sample->measurable);
  CHECK(sample->why_not.empty());
  CHECK(sample->window_s >= 1.0);
  CHECK(sample->window_s < 1.5);
  REQUIRE(sample->devices.size() == 3);
  CHECK(sample->devices[0].device == "dm-0");
  CHECK(sample->devices[1].device == "vdb");
  CHECK(sample->devices[2].device == "vdc");
  const double ms = sample->window_s * 1000;
  CHECK(sample->devices[0].figures.util_percent == doctest::Approx(300 * 100 / ms));
  CHECK(sample->devices[1].figures.util_percent == doctest::Approx(100 * 100 / ms));
  CHECK(sample->devices[2].figures.util_percent == doctest::Approx(800 * 100 / ms));
  CHECK(sample->busiest_device == "vdc");
  CHECK(sample->util_percent == doctest::Approx(800 * 100 / ms));
  CHECK(sample->util_percent > 50);
  CHECK(sample->util_percent <= 80);
}

TEST_CASE("sample_device_busy: stop ends the window early, with a figure over the time waited") {
  iogate::testing::TempTree proc;
  proc.write("diskstats", diskstats_line(254, 0, "vda", 1000) + diskstats_line(254, 1, "vda1", 500));
  auto s = stack_on(254, 1, "ext4", {node("vda1", StackNodeKind::kPartition, {node("vda", StackNodeKind::kDisk)})});
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    replace_file(proc, "diskstats", diskstats_line(254, 0, "vda", 1100) + diskstats_line(254, 1, "vda1", 500));
    stop = true;
  });
  auto started = std::chrono::steady_clock::now();
  auto sample = sample_device_busy(s, std::chrono::seconds(30), proc.root.string(), stop);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  stopper.join();
  REQUIRE(sample.ok());
  CHECK(took < 2);
  CHECK(sample->window_s >= 0.2);
  CHECK(sample->window_s < 2);
  REQUIRE(sample->measurable);
  CHECK(sample->busiest_device == "vda");
  CHECK(sample->util_percent == doctest::Approx(100 * 100 / (sample->window_s * 1000)));
}

TEST_CASE("sample_device_busy: no diskstats is an error naming the path; devices without a line are not measurable") {
  iogate::testing::TempTree proc;
  auto s = stack_on(254, 1, "ext4", {node("vda1", StackNodeKind::kPartition, {node("vda", StackNodeKind::kDisk)})});
  std::atomic<bool> stop{false};
  auto missing = sample_device_busy(s, std::chrono::milliseconds(10), proc.root.string(), stop);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find(proc.path("diskstats")) != std::string::npos);

  proc.write("diskstats", diskstats_line(8, 0, "sda", 1));
  auto absent = sample_device_busy(s, std::chrono::milliseconds(5000), proc.root.string(), stop);
  REQUIRE(absent.ok());
  CHECK_FALSE(absent->measurable);
  CHECK(absent->why_not.find("/data") != std::string::npos);
}

TEST_CASE("sample_device_busy on this machine: the device under /var/tmp is measurable, or says why") {
  auto s = detect_storage_stack("/var/tmp");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  std::atomic<bool> stop{false};
  auto sample = sample_device_busy(*s, std::chrono::milliseconds(200), "/proc", stop);
  REQUIRE_MESSAGE(sample.ok(), (sample.ok() ? "" : sample.error().message));
  MESSAGE("/var/tmp on ", s->mount.fs_type, " ", s->mount.major, ":", s->mount.minor,
          ": measurable=", sample->measurable, " busiest=", sample->busiest_device, " util=", sample->util_percent,
          "% ", sample->why_not);
  if (sample->measurable) {
    CHECK_FALSE(sample->devices.empty());
    CHECK_FALSE(sample->busiest_device.empty());
    CHECK(sample->window_s >= 0.2);
  } else {
    CHECK_FALSE(sample->why_not.empty());
  }
  CHECK(sample->util_percent >= 0);
  CHECK(sample->util_percent <= 100);
  for (const auto& d : sample->devices) {
    CHECK(d.figures.util_percent >= 0);
    CHECK(d.figures.util_percent <= 100);
  }
}
