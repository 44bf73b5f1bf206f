// `iogate probe PATH [flags]`: parse fio-style flags, run the probe, print the report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "checkpoint/checkpoint_probe.h"
#include "dataset/dataset_probe.h"
#include "policy/demand.h"
#include "probe/adaptive_stop.h"
#include "probe/workload.h"

namespace iogate {

struct ProbeOptions {
  std::string path;
  Workload workload;
  EarlyStopConfig early_stop;
  bool json = false;  // --output-format json
  std::string root = "/";
  // Set by --mode dataset: the samples/s probe of a tree of files instead of block I/O.
  std::optional<DatasetRequest> dataset;
  // --workload, --accelerator with --mode dataset: the demand to predict the AU of, for `gpus`.
  std::optional<Demand> demand;
  int gpus = 1;
  // Set by --mode checkpoint: --numjobs ranks each save a file of up to --size and fsync, all at
  // once, in rounds within --runtime, then read them back cold (checkpoint/checkpoint_probe.h).
  std::optional<CheckpointRequest> checkpoint;
};

// Parses the arguments after "probe"; --help prints usage and yields no options (ok with empty path).
Result<ProbeOptions> parse_probe_args(const std::vector<std::string>& args, std::string* help_text);

int run_probe_command(const std::vector<std::string>& args);

}  // namespace iogate
