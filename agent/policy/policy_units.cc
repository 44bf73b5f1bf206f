#include "policy/policy_units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "base/quote.h"

namespace iogate {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A non-negative decimal number at the start of `s` ("1.5" of "1.5GB/s"); false without digits.
bool leading_number(std::string_view s, double* number, std::string_view* rest) {
  size_t i = 0;
  bool digit = false, dot = false;
  for (; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) digit = true;
    else if (s[i] == '.' && !dot) dot = true;
    else break;
  }
  if (!digit) return false;
  std::string num(s.substr(0, i));
  *number = std::strtod(num.c_str(), nullptr);
  *rest = trim(s.substr(i));
  return true;
}

}  // namespace

Result<uint64_t> parse_bandwidth(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  double number = 0;
  std::string_view unit;
  auto bad = [&] {
    return usage_error(fmt::format(
        "{}: expected a bandwidth like 500MB/s, 1.5GB/s, 200MiB/s or bytes a second, got {}", what, quote_value(text)));
  };
  if (!leading_number(s, &number, &unit)) return bad();
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
  if (bytes < 1) return usage_error(fmt::format("{}: must be more than 0 bytes a second, got {}", what, quote_value(text)));
  if (bytes > 1e18) return usage_error(fmt::format("{}: too large a bandwidth: {}", what, quote_value(text)));
  return static_cast<uint64_t>(bytes);
}

Result<double> parse_fraction(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  double number = 0;
  std::string_view rest;
  auto bad = [&] {
    return usage_error(fmt::format("{}: expected a percentage like 3% or a fraction like 0.03, got {}", what, quote_value(text)));
  };
  if (!leading_number(s, &number, &rest)) return bad();
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
                                {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
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

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

Result<std::string> parse_taint_effect(std::string_view text, std::string_view what) {
  if (text == "NoSchedule" || text == "PreferNoSchedule" || text == "NoExecute") return std::string(text);
  if (text == "none") return std::string();
  return usage_error(fmt::format("{}: expected NoSchedule, PreferNoSchedule, NoExecute or none, got {}", what, quote_value(text)));
}

}  // namespace iogate
