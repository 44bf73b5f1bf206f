// A Prometheus histogram counted here: fixed upper bounds, a count per bucket, the sum and count
// of what was observed. Plain data: the owner keeps it under its own lock and renders a copy.
#pragma once

#include <cstdint>
#include <vector>

#include "metrics/exposition.h"

namespace iogate {

struct Histogram {
  std::vector<double> bounds;    // upper bounds, ascending; +Inf is implied
  std::vector<uint64_t> counts;  // per bound (not cumulative), then one for above the last bound
  double sum = 0;
  uint64_t count = 0;
};

// Buckets for `bounds` (ascending, finite), all counts zero.
Histogram make_histogram(std::vector<double> bounds);

// Counts `v` in the first bucket whose bound is >= v (Prometheus's le: less or equal).
void observe(Histogram& h, double v);

// The family's samples for one series: NAME_bucket{labels..., le} cumulative (the last le="+Inf",
// equal to _count), then NAME_sum{labels} and NAME_count{labels}.
std::vector<MetricSample> histogram_samples(const Histogram& h, const MetricLabels& labels);

}  // namespace iogate
