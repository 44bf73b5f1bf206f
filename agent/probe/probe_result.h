// What a probe measured. Plain data: bench/ fills it, report/ renders it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/storage_stack.h"
#include "probe/adaptive_stop.h"
#include "probe/latency_histogram.h"
#include "probe/stop_reason.h"
#include "probe/workload.h"

namespace iogate {

// One direction (read or write) of one job, over the measured window (ramp excluded).
struct DirectionStats {
  uint64_t total_ios = 0;
  uint64_t io_bytes = 0;
  LatencyHistogram clat;  // completion latency, submission to completion seen, ns
};

struct JobResult {
  int job_id = 0;
  uint64_t runtime_ns = 0;  // measured window of this job
  DirectionStats read;
  DirectionStats write;
  std::vector<uint64_t> iops_per_second;  // completions (both directions) in each second of the window
  uint64_t submit_calls = 0;              // io_submit calls (or pread/pwrite calls in thread mode)
  uint64_t reap_calls = 0;                // io_getevents calls; user-space ring reaps are not syscalls
  // Time inside io_submit, all calls (0 for psync). About one completion latency a call where the
  // file system has no asynchronous path (FUSE, buffered I/O): libaio then runs synchronously.
  uint64_t submit_ns = 0;
  // Summed over the window, per slot: from a completion being seen to its refill's io_submit.
  // Time the device had one I/O fewer because of the probe itself (libaio; 0 for psync).
  uint64_t refill_wait_ns = 0;
};

// A device's /proc/diskstats deltas over the measured window, like `iostat -x`.
struct DiskStatsSummary {
  bool available = false;
  std::string device;  // kernel name, e.g. "vda", "nvme0n1p1", "loop3"
  uint32_t major = 0, minor = 0;
  double interval_s = 0;
  double util_percent = 0;
  double reads_per_s = 0, writes_per_s = 0;
  double read_bytes_per_s = 0, write_bytes_per_s = 0;
  double r_await_ns = 0, w_await_ns = 0;
  double avg_queue_size = 0;  // iostat's aqu-sz
  std::vector<double> util_percent_per_second;
};

struct CpuUsage {
  uint64_t user_ns = 0;
  uint64_t sys_ns = 0;
};

// Where the I/O went.
struct TargetFile {
  std::string path;
  uint64_t size_bytes = 0;
  uint64_t readable_bytes = 0;  // allocated and written ranges the probe was allowed to read
  // How the ranges were found (extent_map.h): "fiemap" (the file system's own extent map),
  // "seek_data" (holes by SEEK_DATA/SEEK_HOLE, which FUSE and some network file systems answer
  // generically: all data), or "allocated_blocks" (neither: st_blocks covered the size).
  std::string extent_map;
};

struct ProbeTarget {
  std::string path;  // what the user named
  std::string mount_point;
  std::string fs_type;  // from mountinfo, e.g. "ext4"
  std::string source;   // mount source, e.g. "/dev/vda"
  uint32_t dev_major = 0, dev_minor = 0;
  bool read_only = false;   // the volume refuses writes: existing files were read instead
  bool page_cache = false;  // tmpfs/ramfs: results are memory speed, not storage
  bool network_fs = false;  // a network or FUSE mount (device/network_fs.h); not in the JSON: storage says it
  bool test_file_created = false;
  bool test_file_reused = false;
  std::vector<TargetFile> files;
  uint32_t dio_mem_align = 0;
  uint32_t dio_offset_align = 0;
};

// How settled the measured mean IOPS is: the confidence interval of the per-interval IOPS
// samples (all jobs, both directions) over the measured window, computed on every run, and the
// early-stop rule the run was under (enabled or not).
struct Convergence {
  EarlyStopConfig early_stop;  // as run
  ConfidenceInterval ci;
};

// Adds `from`'s counts, histograms and timeline into `into` (runtime: the longer of the two).
void merge_job_result(JobResult& into, const JobResult& from);

// Little's law: the I/Os inside the kernel on average over the window are the latency-time of
// the window's completions over its length.
double mean_in_flight(const JobResult& j);
// The slots on average between a completion being seen and their refill's io_submit. With
// --iodepth-batch 1 that is time the job's thread kept them from the device.
double mean_awaiting_refill(const JobResult& j);
// Mean time of one io_submit call over the mean completion latency: near 0 where the kernel queues
// the I/O and returns, near 1 or more where io_submit returns only once the I/O is done. 0 without
// calls or completions.
double submit_share_of_latency(const JobResult& j);
// At or above this share, the probe calls libaio synchronous on the target.
inline constexpr double kSynchronousSubmitShare = 0.5;

struct ProbeResult {
  Workload workload;  // as run, with the seed filled in
  uint64_t seed = 0;
  std::string ioengine;  // "libaio" or "psync" (buffered, one thread per queue slot)
  bool direct = true;    // as run: false after a fallback
  ProbeTarget target;
  StorageStack storage;  // what `iogate detect` says about the target; class unknown if it could not tell
  std::vector<JobResult> jobs;
  DiskStatsSummary diskstats;
  CpuUsage cpu;
  uint64_t measured_ns = 0;  // wall time of the measured window
  // kRuntime (ran its full time), kSignal, kError, or an early stop: kSettled, kAboveThreshold,
  // kBelowThreshold (see EarlyStop).
  StopReason stop_reason = StopReason::kNone;
  Convergence convergence;
  std::string started_at;  // RFC 3339 UTC
  std::vector<std::string> warnings;

  // All jobs merged: what the headline shows.
  JobResult aggregate() const;
  uint64_t total_ios() const;
};

}  // namespace iogate
