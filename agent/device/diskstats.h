// Per-device I/O counters from /proc/diskstats (Documentation/admin-guide/iostats.rst) and the
// iostat -x figures derived from two samples.
//
// The benchmark samples the device under the probed file before and after (and each second of)
// its window: utilisation and await seen by the block layer tell "this device is saturated" from
// "the file system or the network in front of it is slow", which latency alone cannot.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace iogate {

// One line of /proc/diskstats. Counters are cumulative since boot (or since the device appeared).
struct DiskStats {
  uint32_t major = 0, minor = 0;
  std::string name;  // kernel name, e.g. "vda", "nvme0n1p2", "dm-0"
  uint64_t reads_completed = 0, reads_merged = 0, sectors_read = 0, read_ticks_ms = 0;
  uint64_t writes_completed = 0, writes_merged = 0, sectors_written = 0, write_ticks_ms = 0;
  uint64_t in_flight = 0, io_ticks_ms = 0, time_in_queue_ms = 0;
  // Kernels >= 4.18 add discards (4 fields), >= 5.5 flushes (2 fields); 0 where the line lacks them.
  uint64_t discards_completed = 0, discards_merged = 0, sectors_discarded = 0, discard_ticks_ms = 0;
  uint64_t flushes_completed = 0, flush_ticks_ms = 0;
};

// Lines with at least the 14 fields of kernels since 2.6.25 are parsed (fields a newer kernel adds
// beyond 20 are ignored); shorter or non-numeric lines are skipped.
std::vector<DiskStats> parse_diskstats(std::string_view text);

// The line for one device from <proc_root>/diskstats. The error names the device ("254:0") when
// it has no line: a partition, dm or md device has one, but 0:N pseudo-devices (btrfs, overlay,
// nfs, tmpfs) never do.
Result<DiskStats> read_diskstats_for(uint32_t major, uint32_t minor, const std::string& proc_root = "/proc");

// iostat -x figures between two samples taken interval_s apart (sectors are 512 bytes whatever the
// device's block size). A counter that went backwards (a reset, or a wrap: the kernel prints the
// *_ticks fields as 32-bit milliseconds, which wrap every 49.7 days) gives 0 for the figures built
// on it rather than a huge bogus value; a non-positive interval gives all zeros.
struct IostatFigures {
  double reads_per_s = 0, writes_per_s = 0, read_bytes_per_s = 0, write_bytes_per_s = 0;
  double r_await_ns = 0, w_await_ns = 0;  // Δticks / Δcompleted, in ns; 0 when no I/O completed
  double util_percent = 0;                // Δio_ticks / interval, clamped to [0, 100]
  double avg_queue_size = 0;              // Δtime_in_queue / interval (iostat's aqu-sz)
};
IostatFigures iostat_between(const DiskStats& before, const DiskStats& after, double interval_s);

}  // namespace iogate
