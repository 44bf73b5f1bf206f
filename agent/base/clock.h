// Monotonic nanoseconds. clock_gettime(CLOCK_MONOTONIC) goes through the vDSO (~20 ns), and the
// engine reads it once per submit or reap batch, not once per I/O, so it never dominates.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace iogate {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// RFC 3339 UTC with seconds, e.g. "2026-12-02T14:11:50Z".
std::string rfc3339_utc_now();

}  // namespace iogate
