// The probe: everything between a PATH and a ProbeResult.
//
// Resolves the target (mount, device, file system), decides what to read or write (a fresh or
// reused test file, an existing file, or the largest files of a read-only volume), opens with
// O_DIRECT or falls back to buffered I/O and says so, runs the jobs over a common measured
// window after the ramp, and samples /proc/diskstats and CPU time over exactly that window.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/paths.h"
#include "base/result.h"
#include "device/storage_stack.h"
#include "probe/adaptive_stop.h"
#include "probe/probe_result.h"
#include "probe/workload.h"

namespace iogate {

struct ProbeRequest {
  std::string path;
  Workload workload;
  // Where /proc and /sys are read from (like lsblk --sysroot): "/host" in a container that
  // mounts the host's root there. PATH itself is always a path of this machine.
  std::string root = "/";
  // Off by default: the run lasts workload.runtime. On, it may end as soon as the mean is
  // settled or clearly beside the threshold; workload.runtime stays the limit.
  EarlyStopConfig early_stop;
  // PATH's stack where the caller detected it already (to choose its floor by class); the probe
  // reports it rather than detecting the same path again. Unused with workload.file.
  std::optional<StorageStack> storage;
  std::string proc_root() const { return proc_under(root); }
  std::string sysfs_root() const { return sys_under(root); }
};

struct ProbeProgress {
  uint64_t elapsed_ns = 0;  // since the jobs started, ramp included
  uint64_t total_ns = 0;    // ramp + runtime
  double current_iops = 0;  // over the last progress interval
  bool ramping = false;
  bool preparing = false;  // still writing the test file
};
using ProgressCallback = std::function<void(const ProbeProgress&)>;

// `stop` is watched throughout (SIGINT/SIGTERM): the run ends early, cleans up, and the result
// says stop_reason "signal". With early_stop enabled the measured window of every job ends when
// EarlyStop decides, and results, diskstats and CPU time all cover that shorter window. Errors are usage errors (bad
// flags for this target) or runtime errors.
Result<ProbeResult> run_probe(const ProbeRequest& request, const std::atomic<bool>& stop,
                              const ProgressCallback& on_progress);

}  // namespace iogate
