#include "device/device_busy.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "device/kernel_file.h"

namespace iogate {

namespace {

// How often the window wait looks at `stop`: short enough that SIGTERM ends a wait promptly,
// long enough to cost nothing.
constexpr std::chrono::milliseconds kStopPoll{50};

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (name.empty()) return;
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// Pre-order, so a device comes before the ones it is built on. A loop device's backing "file"
// node is no device, but the stack under it is: loop I/O lands on that file system's disks.
void collect_block_devices(const StackNode& node, std::vector<std::string>& names) {
  if (node.kind != StackNodeKind::kFile) add_unique(names, node.name);
  for (const StackNode& child : node.children) collect_block_devices(child, names);
}

const DiskStats* find_by_name(const std::vector<DiskStats>& stats, const std::string& name) {
  for (const DiskStats& d : stats) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

Result<std::vector<DiskStats>> read_all_diskstats(const std::string& path) {
  auto text = read_kernel_file(path);
  if (!text.ok()) return text.error();
  return parse_diskstats(*text);
}

// Sleeps until `deadline`, or until `stop` rises, whichever comes first.
void wait_until(std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kStopPoll, deadline - now));
  }
}

std::string no_device_reason(const StorageStack& stack) {
  const std::string& fs = stack.mount.fs_type;
  return fmt::format("{} has no block device", fs.empty() ? std::string("the file system") : fs);
}

}  // namespace

std::vector<std::string> devices_to_watch(const StorageStack& stack, const std::vector<DiskStats>& diskstats) {
  std::vector<std::string> names;
  // 0:N pseudo-devices (btrfs, overlay, nfs, tmpfs) never match a line, so they add nothing here.
  for (const DiskStats& d : diskstats) {
    if (d.major == stack.mount.major && d.minor == stack.mount.minor) {
      add_unique(names, d.name);
      break;
    }
  }
  for (const StackNode& node : stack.stack) collect_block_devices(node, names);
  return names;
}

Result<DeviceBusySample> sample_device_busy(const StorageStack& stack, std::chrono::milliseconds window,
                                            const std::string& proc_root, const std::atomic<bool>& stop) {
  const std::string path = proc_root + "/diskstats";
  DeviceBusySample sample;
  auto before = read_all_diskstats(path);
  if (!before.ok()) return before.error();
  const auto t0 = std::chrono::steady_clock::now();

  // Only the devices that have a line now can be measured; waiting for the others is pointless.
  std::vector<std::string> names;
  for (const std::string& name : devices_to_watch(stack, *before)) {
    if (find_by_name(*before, name)) names.push_back(name);
  }
  if (names.empty()) {
    sample.why_not = stack.stack.empty() ? no_device_reason(stack)
                                         : fmt::format("no device of {} has a line in {}", stack.path, path);
    return sample;
  }

  wait_until(t0 + window, stop);
  auto after = read_all_diskstats(path);
  if (!after.ok()) return after.error();
  sample.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  for (const std::string& name : names) {
    const DiskStats* b = find_by_name(*before, name);
    const DiskStats* a = find_by_name(*after, name);
    if (!a) continue;  // removed during the window (a loop device detached)
    sample.devices.push_back({name, iostat_between(*b, *a, sample.window_s)});
  }
  if (sample.devices.empty()) {
    sample.why_not = fmt::format("every device of {} left {} during the window", stack.path, path);
    return sample;
  }
  sample.measurable = true;
  const DeviceUtilisation* busiest = &sample.devices.front();
  for (const DeviceUtilisation& d : sample.devices) {
    if (d.figures.util_percent > busiest->figures.util_percent) busiest = &d;
  }
  sample.busiest_device = busiest->device;
  sample.util_percent = busiest->figures.util_percent;
  return sample;
}

}  // namespace iogate
