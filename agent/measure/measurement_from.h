// A finished probe as the verdict reads it (policy/evaluate.h's Measurement): the one place the
// engines' result types (ProbeResult, DatasetProbeResult) meet the policy's figures, so that
// policy/ judges a measurement without knowing how it was taken.
#pragma once

#include <cstdint>

#include "dataset/dataset_probe.h"
#include "policy/evaluate.h"
#include "probe/probe_result.h"

namespace iogate {

// Aggregates over jobs. Rates are over the longest job's measured window (as the report shows).
Measurement measurement_from_probe(const ProbeResult& r);
// The headline loader run (the sweep's fastest) of a dataset probe.
Measurement measurement_from_dataset(const DatasetProbeResult& r);
// A probe of synthetic sample reads (policy_probe.h's synthetic_sample_workload) for demand `d`:
// samples/s is the IOPS over the reads a sample costs (synthetic_reads_per_sample).
Measurement measurement_from_synthetic_samples(const ProbeResult& r, const Demand& d);

}  // namespace iogate
