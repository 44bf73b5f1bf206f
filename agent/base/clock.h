// Time: monotonic nanoseconds for measuring, RFC 3339 UTC for reports and API objects.
//
// clock_gettime(CLOCK_MONOTONIC) goes through the vDSO (~20 ns), and the engine reads it once per
// submit or reap batch, not once per I/O, so it never dominates.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace iogate {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// RFC 3339 UTC with seconds, e.g. "2026-12-02T14:11:50Z": reports, conditions, core/v1 events.
std::string rfc3339_utc_now();
std::string rfc3339_seconds(std::chrono::system_clock::time_point t);
// With microseconds, as events.k8s.io wants eventTime: "2026-01-02T03:04:05.123456Z".
std::string rfc3339_micro(std::chrono::system_clock::time_point t);
// "2026-12-02T14:11:50Z", with or without a fraction (kept to the microsecond: a probe lock's
// renewals a second apart must read as changes); nullopt for anything else (other zones too: the
// API server and iogate write UTC).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339_utc(const std::string& text);

}  // namespace iogate
