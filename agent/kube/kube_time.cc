#include <ctime>

#include <fmt/format.h>

#include "kube/operations.h"

namespace iogate {
namespace {

std::tm utc(std::chrono::system_clock::time_point t, int64_t* micros) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  int64_t secs = us / 1000000;
  int64_t frac = us % 1000000;
  if (frac < 0) {  // before 1970: floor, not truncate
    frac += 1000000;
    --secs;
  }
  *micros = frac;
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}

}  // namespace

std::string rfc3339_micro(std::chrono::system_clock::time_point t) {
  int64_t micros = 0;
  std::tm tm = utc(t, &micros);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

std::string rfc3339_seconds(std::chrono::system_clock::time_point t) {
  int64_t micros = 0;
  std::tm tm = utc(t, &micros);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace iogate
