// Is the device under a path busy right now? The node agent asks before it probes, so that it
// never steals bandwidth from a job that is running: utilisation (iostat's %util) of the devices
// under the path, from two /proc/diskstats samples a short window apart.
//
// The devices are the mount's own block device (a partition, dm or md device) and every block
// device of its stack (StorageStack::stack, down to the leaves); the busiest one decides, because
// a saturated leaf under an idle-looking dm device is still saturated. Network and memory file
// systems have no diskstats line: the answer is then "not measurable", never "idle".
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "device/diskstats.h"
#include "device/storage_stack.h"

namespace iogate {

struct DeviceUtilisation {
  std::string device;  // kernel name, "vda", "dm-0"
  IostatFigures figures;
};

struct DeviceBusySample {
  bool measurable = false;                 // false: no device under the path has a diskstats line
  std::string why_not;                     // when not measurable: "nfs4 has no block device", ...
  std::vector<DeviceUtilisation> devices;  // every device sampled, in stack order
  // The busiest device (highest util_percent); meaningful when measurable.
  std::string busiest_device;
  double util_percent = 0;
  double window_s = 0;  // the real time between the two samples
};

// Kernel names of the block devices to watch for a stack: the mount's device first (found by
// MAJ:MIN in `diskstats`), then every node of stack.stack that is a block device (not kind "file"),
// without duplicates.
std::vector<std::string> devices_to_watch(const StorageStack& stack, const std::vector<DiskStats>& diskstats);

// Samples <proc_root>/diskstats, waits `window` (returning early, with what it has, when `stop`
// rises), samples again. An unreadable diskstats is an error; a stack without block devices is a
// sample with measurable = false.
Result<DeviceBusySample> sample_device_busy(const StorageStack& stack, std::chrono::milliseconds window,
                                            const std::string& proc_root, const std::atomic<bool>& stop);

}  // namespace iogate
