#include "base/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/quote.h"
#include "base/trim.h"

namespace iogate {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "128k" into 128 and "k", "1.5GB/s" into 1.5 and "GB/s": a non-negative number, maybe
// with a fraction, and the rest as written. False without digits.
bool split_number(std::string_view s, double* number, std::string_view* rest) {
  size_t i = 0;
  bool seen_digit = false, seen_dot = false;
  while (i < s.size()) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      seen_digit = true;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!seen_digit) return false;
  std::string num(s.substr(0, i));
  char* end = nullptr;
  *number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  *rest = s.substr(i);
  return true;
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text, std::string_view what) {
  std::string_view s = trim_space(text);
  double number = 0;
  std::string_view rest;
  if (!split_number(s, &number, &rest)) {
    return usage_error(fmt::format("{}: expected a size like 4k, 1m or 1g, got {}", what, quote_value(text)));
  }
  const std::string suffix = lower(rest);
  double mult = 0;
  if (suffix.empty() || suffix == "b") mult = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") mult = 1024.0;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") mult = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else {
    return usage_error(fmt::format("{}: unknown size suffix {} in {} (use k, m, g or t)", what, quote_value(suffix),
                                   quote_value(text)));
  }
  double bytes = number * mult;
  if (bytes < 1) return usage_error(fmt::format("{}: size must be at least 1 byte, got {}", what, quote_value(text)));
  if (bytes > 9.0e18) return usage_error(fmt::format("{}: too large a size: {}", what, quote_value(text)));
  if (bytes != std::floor(bytes)) {
    return usage_error(fmt::format("{}: {} is not a whole number of bytes", what, quote_value(text)));
  }
  return static_cast<uint64_t>(bytes);
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string_view what) {
  std::string_view s = trim_space(text);
  double number = 0;
  std::string_view rest;
  if (!split_number(s, &number, &rest)) {
    return usage_error(fmt::format("{}: expected a duration like 10s, 500ms or 2m, got {}", what, quote_value(text)));
  }
  const std::string suffix = lower(rest);
  double ns_per_unit = 0;
  if (suffix.empty() || suffix == "s") ns_per_unit = 1e9;
  else if (suffix == "ms") ns_per_unit = 1e6;
  else if (suffix == "us") ns_per_unit = 1e3;
  else if (suffix == "m" || suffix == "min") ns_per_unit = 60e9;
  else if (suffix == "h") ns_per_unit = 3600e9;
  else {
    return usage_error(fmt::format("{}: unknown duration unit {} in {} (use ms, s, m or h)", what, quote_value(suffix),
                                   quote_value(text)));
  }
  double ns = number * ns_per_unit;
  if (ns > 1e18) return usage_error(fmt::format("{}: too long a duration: {}", what, quote_value(text)));
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(ns)));
}

Result<int64_t> parse_integer(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  std::string_view s = trim_space(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    return usage_error(fmt::format("{}: expected a whole number, got {}", what, quote_value(text)));
  }
  if (v < min || v > max) {
    return usage_error(fmt::format("{}: {} is out of range [{}, {}]", what, v, min, max));
  }
  return v;
}

Result<bool> parse_bool(std::string_view text, std::string_view what) {
  std::string_view s = trim_space(text);
  if (s == "1" || s == "true") return true;
  if (s == "0" || s == "false") return false;
  return usage_error(fmt::format("{}: expected 1 or 0 (true or false), got {}", what, quote_value(text)));
}

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 2 : (bytes < 100 ? 1 : 0), kUnits[u]);
}

std::string format_rate_bytes(double bytes_per_s) { return format_bytes(bytes_per_s) + "/s"; }

std::string format_thousands(double n) {
  if (!std::isfinite(n)) return "-";
  bool negative = n < 0;
  auto whole = static_cast<uint64_t>(std::llround(std::fabs(n)));
  std::string digits = std::to_string(whole);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string format_count(double n) {
  if (n < 1000) return fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.1f}k", n / 1e3);
  if (n < 1e9) return fmt::format("{:.2f}M", n / 1e6);
  return fmt::format("{:.2f}G", n / 1e9);
}

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.{}f} µs", ns / 1e3, ns < 1e4 ? 1 : 0);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::string format_size_compact(uint64_t bytes) {
  static const char* kSuffix[] = {"", "k", "m", "g", "t"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{}{}", bytes, kSuffix[u]);
}

Result<uint64_t> parse_bandwidth(std::string_view text, std::string_view what) {
  std::string_view s = trim_space(text);
  double number = 0;
  std::string_view unit;
  auto bad = [&] {
    return usage_error(fmt::format("{}: expected a bandwidth like 500MB/s, 1.5GB/s, 200MiB/s or bytes a second, got {}",
                                   what, quote_value(text)));
  };
  if (!split_number(s, &number, &unit)) return bad();
  unit = trim_space(unit);
  double mult = 0;
  if (unit.empty() || unit == "B/s") mult = 1;
  else if (unit == "kB/s" || unit == "KB/s") mult = 1e3;
  else if (unit == "MB/s") mult = 1e6;
  else if (unit == "GB/s") mult = 1e9;
  else if (unit == "TB/s") mult = 1e12;
  else if (unit == "KiB/s") mult = 1024.0;
  else if (unit == "MiB/s") mult = 1024.0 * 1024;
  else if (unit == "GiB/s") mult = 1024.0 * 1024 * 1024;
  else if (unit == "TiB/s") mult = 1024.0 * 1024 * 1024 * 1024;
  else return bad();
  double bytes = std::round(number * mult);
  if (bytes < 1)
    return usage_error(fmt::format("{}: must be more than 0 bytes a second, got {}", what, quote_value(text)));
  if (bytes > 1e18) return usage_error(fmt::format("{}: too large a bandwidth: {}", what, quote_value(text)));
  return static_cast<uint64_t>(bytes);
}

Result<double> parse_fraction(std::string_view text, std::string_view what) {
  std::string_view s = trim_space(text);
  double number = 0;
  std::string_view rest;
  auto bad = [&] {
    return usage_error(
        fmt::format("{}: expected a percentage like 3% or a fraction like 0.03, got {}", what, quote_value(text)));
  };
  if (!split_number(s, &number, &rest)) return bad();
  rest = trim_space(rest);
  if (rest == "%") return number / 100.0;
  if (!rest.empty() || number > 1) return bad();
  return number;
}

std::string format_bandwidth_decimal(double b) {
  static const char* kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  if (u == 0 || b >= 100 || b == std::floor(b)) return fmt::format("{:.0f} {}", b, kUnits[u]);
  return fmt::format("{:.{}f} {}", b, b < 10 ? 2 : 1, kUnits[u]);
}

std::string format_duration_compact(int64_t ns) {
  struct Unit {
    int64_t ns;
    const char* name;
  };
  static const Unit kUnits[] = {{3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
                                {1'000'000, "ms"},        {1'000, "us"},         {1, "ns"}};
  if (ns == 0) return "0s";
  for (const Unit& u : kUnits) {
    if (u.ns == 60'000'000'000 && ns < 120'000'000'000) continue;  // "60s" reads better than "1m"
    if (ns % u.ns == 0) return fmt::format("{}{}", ns / u.ns, u.name);
  }
  return fmt::format("{}s", double(ns) / 1e9);
}

std::string format_percent(double fraction) {
  double p = fraction * 100;
  if (std::fabs(p - std::round(p)) < 1e-9) return fmt::format("{:.0f}%", p);
  return fmt::format("{:.1f}%", p);
}

}  // namespace iogate
