#include "metrics/histogram.h"

#include <algorithm>
#include <utility>

namespace iogate {

Histogram make_histogram(std::vector<double> bounds) {
  Histogram h;
  h.counts.assign(bounds.size() + 1, 0);
  h.bounds = std::move(bounds);
  return h;
}

void observe(Histogram& h, double v) {
  size_t i = std::lower_bound(h.bounds.begin(), h.bounds.end(), v) - h.bounds.begin();
  h.counts[i]++;
  h.sum += v;
  h.count++;
}

std::vector<MetricSample> histogram_samples(const Histogram& h, const MetricLabels& labels) {
  std::vector<MetricSample> out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    MetricLabels l = labels;
    l.emplace_back("le", i < h.bounds.size() ? format_sample_value(h.bounds[i]) : "+Inf");
    out.push_back({std::move(l), static_cast<double>(cumulative), "_bucket"});
  }
  out.push_back({labels, h.sum, "_sum"});
  out.push_back({labels, static_cast<double>(h.count), "_count"});
  return out;
}

}  // namespace iogate
