// `iogate probe --mode dataset PATH`: run the dataset probe and print its report.
//
// SIGINT/SIGTERM end the scan or the loader within a file's read, and the partial report is
// still printed (StopReason::kSignal), with exit code 3; nothing is left behind because nothing
// was written.
#pragma once

#include <string>

#include "dataset/dataset_probe.h"

namespace iogate {

int run_dataset_probe_command(const DatasetRequest& request, bool json);

}  // namespace iogate
