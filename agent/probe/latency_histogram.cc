#include "probe/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace iogate {

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBucketCount; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
}

double LatencyHistogram::stddev() const {
  if (count_ < 2) return 0;
  double n = static_cast<double>(count_);
  double m = sum_ / n;
  double var = sum_squares_ / n - m * m;
  return var > 0 ? std::sqrt(var) : 0;
}

uint64_t LatencyHistogram::bucket_low(size_t index) {
  if (index < kExactLimit) return index;
  size_t rel = index - kExactLimit;
  int shift = static_cast<int>(rel / kSubBuckets) + 1;
  uint64_t top = kSubBuckets + rel % kSubBuckets;
  return top << shift;
}

uint64_t LatencyHistogram::bucket_high(size_t index) {
  if (index < kExactLimit) return index;
  size_t rel = index - kExactLimit;
  int shift = static_cast<int>(rel / kSubBuckets) + 1;
  return bucket_low(index) + ((uint64_t{1} << shift) - 1);
}

uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  double want = std::ceil(p / 100.0 * static_cast<double>(count_));
  uint64_t rank = static_cast<uint64_t>(std::clamp(want, 1.0, static_cast<double>(count_)));
  // The extremes are known exactly; a bucket midpoint would only blur them.
  if (rank == count_) return max_;
  if (rank == 1) return min();
  uint64_t seen = 0;
  for (size_t i = 0; i < kBucketCount; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      uint64_t low = bucket_low(i), high = bucket_high(i);
      uint64_t mid = low + (high - low) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::nonempty_buckets() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < kBucketCount; ++i) {
    if (buckets_[i]) out.push_back({bucket_low(i), bucket_high(i), buckets_[i]});
  }
  return out;
}

}  // namespace iogate
