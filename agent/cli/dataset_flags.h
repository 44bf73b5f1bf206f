// The flags of `iogate probe --mode dataset PATH`: the scan's budget, the loader's workers (one
// count or a sweep list), its runtime and O_DIRECT, and a samples/s target for the advice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "base/result.h"
#include "dataset/dataset_probe.h"

namespace iogate {

// Flags only the dataset mode reads (--runtime, --direct, --seed, --early-stop, --tolerance are the probe's own).
boost::program_options::options_description dataset_flags();

// The probe's flags that mean nothing to the dataset mode: given explicitly, they are an error.
inline constexpr std::string_view kIoOnlyProbeFlags[] = {"rw",   "rwmixread", "bs",   "iodepth",   "numjobs",
                                                         "ramp", "size",      "file", "keep-file", "min-iops"};

// "8" or "1,2,4,8,16": worker counts in [1, 1024], each once, in the order given.
Result<std::vector<int>> parse_worker_counts(std::string_view text, std::string_view what);

// Builds the request from parsed flags; errors name the flag.
Result<DatasetRequest> dataset_request_from_flags(const boost::program_options::variables_map& vm,
                                                  const std::string& path, const std::string& root);

}  // namespace iogate
