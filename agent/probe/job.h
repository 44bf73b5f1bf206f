// One job of a probe: a thread that keeps iodepth I/Os in flight against an IoLayout.
//
// Two engines share this contract: libaio (run_aio_job) for direct I/O, and psync
// (run_psync_job), iodepth threads doing blocking pread/pwrite, for buffered I/O, where
// libaio silently degrades to synchronous submission and its queue depth would be fiction.
#pragma once

#include <atomic>
#include <cstdint>
#include <latch>
#include <optional>

#include "base/result.h"
#include "probe/io_layout.h"
#include "probe/probe_result.h"
#include "probe/workload.h"

namespace iogate {

struct JobPlan {
  int job_id = 0;
  uint64_t seed = 0;
  uint64_t seq_begin = 0, seq_end = 0;  // this job's block slice for sequential workloads
};

// Shared by all jobs of a run. The probe sets ramp_end_ns/end_ns after every job is ready,
// then opens `go`, so every job's measured window is the same wall-clock window.
// end_ns may later move earlier, once, when the probe stops early: a job re-reads it after each
// clock read and counts a completion only if it was seen before the end it read then. The probe
// sets the new end a few milliseconds ahead of its own clock, so a job that read the old end
// cannot have seen a completion after the new one, and the window stays common to all jobs.
struct JobControl {
  const IoLayout* layout = nullptr;
  const Workload* workload = nullptr;
  std::latch* ready = nullptr;
  std::latch* go = nullptr;
  std::atomic<uint64_t> ramp_end_ns{0};
  std::atomic<uint64_t> end_ns{0};
  std::atomic<bool>* stop = nullptr;  // a signal, or another job's failure
};

struct JobOutcome {
  JobResult result;
  std::optional<Error> error;
  std::atomic<uint64_t> completed{0};  // measured completions so far, for live progress
};

void run_aio_job(const JobPlan& plan, JobControl& control, JobOutcome& out);
void run_psync_job(const JobPlan& plan, JobControl& control, JobOutcome& out);

// Seconds in the measured window, the last one possibly partial: the timeline's length.
inline size_t timeline_length(uint64_t ramp_end_ns, uint64_t end_ns) {
  return static_cast<size_t>((end_ns - ramp_end_ns + 999999999ULL) / 1000000000ULL);
}

// What both engines do per completion: count it into the right direction and second.
struct CompletionRecorder {
  JobResult* result;
  uint64_t ramp_end_ns;
  uint64_t end_ns;
  uint64_t block_size;

  // Returns true if the completion fell inside the measured window.
  bool record(bool is_write, uint64_t submit_ns, uint64_t complete_ns) {
    if (complete_ns < ramp_end_ns || complete_ns >= end_ns) return false;
    DirectionStats& d = is_write ? result->write : result->read;
    ++d.total_ios;
    d.io_bytes += block_size;
    d.clat.record(complete_ns - submit_ns);
    size_t second = static_cast<size_t>((complete_ns - ramp_end_ns) / 1000000000ULL);
    if (second < result->iops_per_second.size()) ++result->iops_per_second[second];
    return true;
  }
};

// The next I/O's direction for a workload: reads for read modes, writes for write modes,
// a weighted coin for randrw.
inline bool next_is_write(const Workload& w, FastRng& rng) {
  switch (w.rw) {
    case RwMode::kRandRead:
    case RwMode::kRead: return false;
    case RwMode::kRandWrite:
    case RwMode::kWrite: return true;
    case RwMode::kRandRw: return static_cast<int>(rng.percent()) >= w.rwmixread;
  }
  return false;
}

}  // namespace iogate
