// What a training job asks of its dataset volume, in the job's own units, and what a measured
// rate means for it: samples/s needed by N accelerators, the accelerator utilisation (AU) the
// volume allows them, and how many accelerators it sustains at the AU floor.
//
// The method is MLPerf Storage's (DLIO): an accelerator consumes a batch per step and computes
// for a fixed time; while the input pipeline keeps ahead, the step takes its compute time; when
// it falls behind, the accelerator waits for data. With a loader delivering D samples/s to N
// accelerators that each consume r samples/s at full utilisation, a step's wall time is
// max(compute, batch / (D / N)), so
//     AU = compute / wall = min(1, D / (N × r))
// and the most accelerators held at AU >= floor is floor(D / (floor × r)). This is the one
// computation of "samples/s needed", "predicted AU" and "accelerators sustained": the preflight's
// verdict, the node agent and the webhook call it, never a copy of it.
//
// What it cannot predict: a loader bound by its own CPU (decoding, augmentation) where the probe
// read bytes only, paths that bypass the page cache and the CPU (GPUDirect Storage), caches warmer
// than the probe's (a second epoch from RAM), and a volume shared with other jobs at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dataset/feed_limit.h"

namespace iogate {

// MLPerf Storage's passing AU for resnet50 and unet3d; cosmoflow's is 0.70.
inline constexpr double kDefaultMinAu = 0.90;

// A named workload × accelerator from MLPerf Storage's published DLIO configs.
struct NamedWorkload {
  std::string_view workload;       // "resnet50", "unet3d", "retinanet", ...
  std::string_view accelerator;    // "a100", "h100", "b200", "mi355"
  int batch_size = 0;              // reader.batch_size
  double computation_s = 0;        // train.computation_time: one step's compute
  uint64_t record_bytes = 0;       // dataset.record_length_bytes: one sample
  double min_au = kDefaultMinAu;   // metric.au
  std::string_view source;         // the config file it is from
  bool what_if = false;            // not scored in MLPerf Storage v3.0: a planning figure
  uint64_t records_per_shard = 0;  // dataset.num_samples_per_file where records are read out of shards

  double samples_per_s() const { return computation_s > 0 ? batch_size / computation_s : 0; }
};

const std::vector<NamedWorkload>& named_workloads();
const NamedWorkload* find_named_workload(std::string_view workload, std::string_view accelerator);
// "resnet50 (a100, h100), unet3d (a100, h100, b200), ...", for error messages and help.
std::string named_workload_list();

// A rule's demand (the policy's rules[].demand).
struct Demand {
  double samples_per_s = 0;  // one accelerator's consumption at full utilisation
  // One sample's size: what synthetic sample reads read when the volume holds no dataset. The
  // dataset's own sizes count where it does.
  std::optional<uint64_t> sample_bytes;
  // Shard-shaped access (WebDataset tar, MosaicML MDS, TFRecord, parquet): samples are records read
  // in sequence out of shards of this size, one shard per reader at a time, so the volume's
  // sequential bytes/s, not its files/s or random reads, set the rate. Needs sample_bytes.
  std::optional<uint64_t> shard_bytes;
  double min_au = kDefaultMinAu;
  std::string workload, accelerator;  // set when the demand names an MLPerf workload
};

// The demand of a named workload: its samples/s, record size and AU floor.
Demand named_demand(const NamedWorkload& w);

// The accelerators a demand is judged for: the pod's GPUs, or one for a pod that requests none
// (a demand describes what one accelerator consumes, so zero would need nothing).
int demand_accelerators(int gpus);

double samples_needed(const Demand& d, int accelerators);
// The delivered samples/s at which the verdict flips for `gpus`: min_au × needed. What an early
// stop compares against, and the dataset advice's target.
double verdict_flip_samples_per_s(const Demand& d, int gpus);
// Reads of `block_size` that one sample of `sample_bytes` takes (at least 1): synthetic samples
// are read in such pieces, so their samples/s is reads/s over this.
uint64_t reads_per_sample(uint64_t sample_bytes, uint64_t block_size);
// min(1, delivered / needed); 1 when nothing is needed.
double predicted_au(double delivered_samples_per_s, double needed_samples_per_s);
// The most accelerators held at AU >= d.min_au by `delivered` samples/s.
int accelerators_sustained(const Demand& d, double delivered_samples_per_s);

// A demand judged against a delivered rate.
struct DemandOutcome {
  int accelerators = 0;
  double samples_per_s_needed = 0;
  double samples_per_s_delivered = 0;
  double predicted_au = 0;
  double min_au = kDefaultMinAu;
  int accelerators_sustained = 0;
  bool passed = false;  // predicted_au >= min_au
  // What limits the delivered rate, where the measurement found it (bench/feed_limit.h).
  FeedLimit limit = FeedLimit::kUnknown;
};
DemandOutcome judge_demand(const Demand& d, int accelerators, double delivered_samples_per_s);

// "predicted AU 0.31 for 8 accelerators (14,288 samples/s needed, AU >= 0.90); sustains 2".
std::string demand_outcome_text(const DemandOutcome& o);

// "2,500 samples/s per accelerator" or "resnet50 on h100: 1,786 samples/s per accelerator".
std::string demand_summary(const Demand& d);

}  // namespace iogate
