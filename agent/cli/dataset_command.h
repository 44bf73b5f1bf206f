// `iogate probe --mode dataset PATH`: run the dataset probe and print its report.
//
// SIGINT/SIGTERM end the scan or the loader within a file's read, and the partial report is
// still printed (StopReason::kSignal), with exit code 3; nothing is left behind because nothing
// was written.
#pragma once

#include <string>

#include <optional>

#include "dataset/dataset_probe.h"
#include "policy/demand.h"

namespace iogate {

// With a demand: the predicted AU for `gpus` and the accelerators the measured samples/s sustain,
// after the report (human) or as its "demand" object (JSON).
int run_dataset_probe_command(const DatasetRequest& request, const std::optional<Demand>& demand, int gpus, bool json);

}  // namespace iogate
