// A log-linear latency histogram with fixed memory and bounded relative error.
//
// Values below 128 ns are counted exactly; above, each power of two is split into 64 equal
// sub-buckets (as fio does), so a bucket spans at most 1/64 of its lower bound and its midpoint
// is within 1/128 (0.78%) of any value in it. Recording is a count-leading-zeros, a shift and an
// increment: cheap enough to call for every completion in the hot loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace iogate {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 6;
  static constexpr uint64_t kSubBuckets = 1u << kSubBucketBits;  // 64
  static constexpr uint64_t kExactLimit = 2 * kSubBuckets;       // values < 128 are exact
  static constexpr size_t kBucketCount = kExactLimit + (63 - kSubBucketBits) * kSubBuckets;

  void record(uint64_t value_ns) {
    ++buckets_[bucket_index(value_ns)];
    ++count_;
    if (value_ns < min_) min_ = value_ns;
    if (value_ns > max_) max_ = value_ns;
    double v = static_cast<double>(value_ns);
    sum_ += v;
    sum_squares_ += v * v;
  }

  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double stddev() const;  // population standard deviation, as fio prints

  // Nearest-rank percentile (p in (0, 100]): the value below or at which p% of samples fall,
  // reported as its bucket's midpoint clamped to [min, max].
  uint64_t percentile(double p) const;

  // A bucket with its inclusive value range, for rendering.
  struct Bucket {
    uint64_t low_ns;
    uint64_t high_ns;
    uint64_t count;
  };
  // Non-empty buckets in ascending order.
  std::vector<Bucket> nonempty_buckets() const;

  static size_t bucket_index(uint64_t v) {
    if (v < kExactLimit) return static_cast<size_t>(v);
    int msb = 63 - __builtin_clzll(v);
    int shift = msb - kSubBucketBits;
    uint64_t top = v >> shift;  // in [64, 128)
    return static_cast<size_t>(kExactLimit + static_cast<uint64_t>(msb - kSubBucketBits - 1) * kSubBuckets +
                               (top - kSubBuckets));
  }
  static uint64_t bucket_low(size_t index);
  static uint64_t bucket_high(size_t index);  // inclusive

 private:
  std::array<uint64_t, kBucketCount> buckets_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

}  // namespace iogate
