#include "base/clock.h"

#include <cstdio>
#include <ctime>

#include <fmt/format.h>

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
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

std::string rfc3339_utc_now() { return rfc3339_seconds(std::chrono::system_clock::now()); }

std::optional<std::chrono::system_clock::time_point> parse_rfc3339_utc(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  std::string rest = text.substr(size_t(consumed));
  int64_t micros = 0;
  if (!rest.empty() && rest[0] == '.') {
    size_t end = rest.find_first_not_of("0123456789", 1);
    if (end == std::string::npos) end = rest.size();
    // Microseconds, as rfc3339_micro writes them; digits past the sixth are dropped.
    for (size_t i = 1; i < 7; ++i) micros = micros * 10 + (i < end ? rest[i] - '0' : 0);
    rest = rest.substr(end);
  }
  if (rest != "Z") return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = timegm(&tm);
  if (t == -1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t) + std::chrono::microseconds(micros);
}

}  // namespace iogate
