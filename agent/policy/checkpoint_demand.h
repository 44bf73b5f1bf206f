// What a training job's checkpoints ask of their volume, in the job's units: the GPU time a
// synchronous save costs. The method is MLPerf Storage's (DLIO checkpointing): every rank writes
// its own file at once, buffered, ending with fsync; a save takes as long as its slowest rank. A
// pod's ranks are its GPUs, each writing an equal share of the pod's checkpoint.
//
// The volume's answer is a line, t(bytes per rank) = fixed + bytes / rate, measured with as many
// writers as the pod has ranks (checkpoint/checkpoint_probe.h); the save time of the pod's
// checkpoint is read off it, and the stall is save ÷ interval: the share of training time the
// GPUs wait while a synchronous save runs. Restore is the same line for a cold read-back.
//
// What it cannot predict: asynchronous checkpointing (the GPUs wait only for the copy to host
// memory), GPU-direct paths, serialisation bound by the client's CPU on a fast volume, object
// stores behind a connector, and other jobs' checkpoints landing on a shared volume at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iogate {

// The share of training time a synchronous save may take where a rule names none: 5%, below the
// 12% average that Azure's Nebula documentation reports as the overhead worth removing, and what
// a save of a minute every 20 minutes costs.
inline constexpr double kDefaultMaxStall = 0.05;
// The interval where a rule names none: a failure then loses at most half an hour of the job.
inline constexpr std::chrono::minutes kDefaultCheckpointInterval{30};

// A named MLPerf Storage checkpoint workload (configs/dlio/workload/llama3_*.yaml).
struct NamedCheckpoint {
  std::string_view workload;  // "llama3-8b"
  uint64_t bytes = 0;         // one checkpoint, all ranks: model and optimizer state
  int ranks = 0;              // the ranks it is written from
  std::string_view source;    // the config file and the Rules.md table it is from

  uint64_t rank_bytes() const { return ranks > 0 ? bytes / uint64_t(ranks) : bytes; }
};
const std::vector<NamedCheckpoint>& named_checkpoints();
const NamedCheckpoint* find_named_checkpoint(std::string_view workload);
std::string named_checkpoint_list();  // "llama3-8b, llama3-70b, ..."

// A rule's checkpoint (rules[].demand.checkpoint, or demand.workload naming a llama3 model).
struct CheckpointDemand {
  // What one rank writes per checkpoint. From size ÷ the pod's ranks where the rule gives the
  // pod's size (`size_bytes`), or the named model's share per rank.
  uint64_t size_bytes = 0;  // the pod's checkpoint, all its ranks; 0 when named
  std::string workload;     // a named model
  uint64_t named_rank_bytes = 0;
  int named_ranks = 0;
  std::chrono::nanoseconds interval = kDefaultCheckpointInterval;
  double max_stall = kDefaultMaxStall;
  std::optional<std::chrono::nanoseconds> max_restore;
};
CheckpointDemand named_checkpoint_demand(const NamedCheckpoint& c);

// The ranks a pod of `gpus` GPUs writes from (at least one).
int checkpoint_ranks(int gpus);
// What each rank writes, and what the pod writes in all, for a pod of `gpus` GPUs.
uint64_t checkpoint_rank_bytes(const CheckpointDemand& d, int gpus);
uint64_t checkpoint_pod_bytes(const CheckpointDemand& d, int gpus);

// The measured line: t = fixed_s + bytes / bytes_per_s, per rank, slowest rank, with `ranks`
// writing (or reading) at once.
struct TransferLine {
  double fixed_s = 0;
  double bytes_per_s = 0;
  bool valid() const { return bytes_per_s > 0; }
  double seconds(uint64_t bytes) const;
  // The most bytes moved within `seconds` (0 where the fixed part alone is longer).
  uint64_t bytes_within(double seconds) const;
};

// What the volume did for a checkpoint (the measurement's part a checkpoint rule reads).
struct CheckpointFigures {
  int ranks = 0;
  TransferLine save, restore;  // restore invalid: not measured
  uint64_t bytes_written = 0, bytes_read = 0;
  double measured_s = 0;
  bool read_only = false;    // the volume refused the writes
  bool extrapolated = true;  // no round saved the whole checkpoint: a save is read off the line
  std::string note;          // why there are no figures, where there are none
};

// "checkpoint, 2 ranks: save 48.1 MB/s a rank + 20 ms, restore 51.0 MB/s a rank; wrote 384 MiB
// in 4.1 s", for logs and the human report.
std::string checkpoint_figures_text(const CheckpointFigures& f);

// A checkpoint demand judged.
struct CheckpointOutcome {
  int ranks = 0;
  uint64_t bytes = 0, rank_bytes = 0;
  double interval_s = 0;
  double save_seconds = 0, stall_fraction = 0, max_stall = kDefaultMaxStall;
  std::optional<double> restore_seconds, max_restore_seconds;
  // What fits the budget: the largest checkpoint at this interval, and the shortest interval
  // at this size.
  uint64_t largest_bytes = 0;
  double min_interval_s = 0;
  bool passed = false;
};
// `f` measured with checkpoint_ranks(gpus) ranks; a figure without a valid save line fails.
CheckpointOutcome judge_checkpoint(const CheckpointDemand& d, int gpus, const CheckpointFigures& f);

// "save 41 s every 30m: stall 2.3%; restore 35 s".
std::string checkpoint_outcome_text(const CheckpointOutcome& o);
// "stall <= 5% of 30m (105 GiB from 8 ranks)"; without GPUs, per rank.
std::string checkpoint_demand_text(const CheckpointDemand& d, std::optional<int> gpus);

}  // namespace iogate
