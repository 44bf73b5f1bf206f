// A uniform random sample of fixed size from a stream of unknown length: Vitter's Algorithm R.
//
// Item i (0-based) enters the reservoir with probability k/(i+1), replacing a uniformly chosen
// slot, so after n items every one of them is in the sample with probability k/n. The caller
// learns from `offer` whether the item will be kept before building it, so a directory walk can
// stat and build a path only for the files that enter the sample (k of n, then k·ln(n/k) more),
// not for all n.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/rng.h"

namespace iogate {

template <class T>
class Reservoir {
 public:
  Reservoir(size_t capacity, uint64_t seed) : capacity_(capacity), rng_(seed) { items_.reserve(capacity); }

  // Counts one more item of the stream; returns the slot it goes to, or nullopt if it is not kept.
  std::optional<size_t> offer() {
    uint64_t i = seen_++;
    if (i < capacity_) {
      items_.emplace_back();
      return static_cast<size_t>(i);
    }
    uint64_t j = rng_.below(i + 1);
    if (j < capacity_) return static_cast<size_t>(j);
    return std::nullopt;
  }
  T& slot(size_t index) { return items_[index]; }
  // The slot `offer` just handed out turned out unusable (the file vanished): forget the item.
  // Only undoes the count when the reservoir was still filling; otherwise the old item stays.
  void withdraw_last(size_t index) {
    if (index + 1 == items_.size() && seen_ == items_.size()) {
      items_.pop_back();
      --seen_;
    }
  }

  uint64_t seen() const { return seen_; }
  size_t capacity() const { return capacity_; }
  const std::vector<T>& items() const { return items_; }
  std::vector<T> take() { return std::move(items_); }

 private:
  size_t capacity_;
  FastRng rng_;
  uint64_t seen_ = 0;
  std::vector<T> items_;
};

}  // namespace iogate
