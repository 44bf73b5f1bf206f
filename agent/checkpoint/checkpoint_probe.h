// What a synchronous checkpoint save and its restore take on a volume, measured the way a save
// happens: one writer per rank, all at once, each writing its own new file in large buffered
// writes and ending with fsync (torch.save per rank, torch.distributed.checkpoint's file writer,
// MLPerf Storage's checkpointing); a restore is the same files read back cold. A save's time is
// its slowest rank's.
//
// It writes seconds' worth, not a checkpoint's terabytes: rounds of growing size per rank, each a
// whole save (create, write, fsync), until two long rounds agree, the time budget is spent, or a
// round is the whole checkpoint. Each round's time is the slowest rank's; a least-squares line
// t = fixed + bytes / rate through the rounds is what a save of any size is read off. The files
// are iogate's own (hidden, flocked, removed when done, on a signal's stop, or by the next run
// after a kill); their data is incompressible. A round's bytes in all ranks stay within half the
// memory the process may use (its cgroup's limit), so the dirty pages of a round never push an
// initContainer into reclaim or an OOM kill.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "probe/stop_reason.h"

namespace iogate {

struct CheckpointRequest {
  std::string directory;  // where the rank files go: the checkpoint volume's mount
  int ranks = 1;
  // The most one rank writes in one round: the checkpoint's own share per rank (a smaller
  // checkpoint is then saved whole), within the memory and free-space bounds.
  uint64_t max_rank_bytes = uint64_t{1} << 40;
  std::chrono::nanoseconds runtime = std::chrono::seconds(5);  // the save rounds' budget
  bool restore = true;                                         // read the last rounds' files back cold
  uint64_t seed = 0;
};

// One round: every rank moved `rank_bytes`; `seconds` is the slowest rank's time.
struct CheckpointRound {
  uint64_t rank_bytes = 0;
  double seconds = 0;
};

// t = fixed_s + bytes / bytes_per_s, per rank; bytes_per_s 0 where nothing was measured.
struct FittedLine {
  double fixed_s = 0;
  double bytes_per_s = 0;
};
// The least-squares line through the rounds (those of at least 0.25 s where two are), the
// intercept held at 0 where it would be negative, and where the rounds are all one size.
FittedLine fit_rounds(const std::vector<CheckpointRound>& rounds);

struct CheckpointProbeResult {
  std::string directory;
  int ranks = 0;
  std::vector<CheckpointRound> saves, restores;
  FittedLine save, restore;
  uint64_t bytes_written = 0, bytes_read = 0;  // all ranks, all rounds
  uint64_t round_bytes_limit = 0;              // the most a round wrote in all ranks (memory, space)
  double measured_s = 0;
  StopReason stop_reason = StopReason::kNone;
};

// Errors: the directory refuses writes (read-only: kRuntime with errno_code EROFS, or EACCES),
// no space for a first round, an I/O error. A stop (signal) ends it with kSignal and what was
// measured so far.
Result<CheckpointProbeResult> run_checkpoint_probe(const CheckpointRequest& request, const std::atomic<bool>& stop);

// The memory this process may use: its cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes),
// or the machine's memory where there is none.
uint64_t process_memory_limit_bytes();

}  // namespace iogate
