// Parsing and formatting of the values people write and read: sizes and durations the way fio
// users write them ("4k", "128K", "1m", "1G" are binary multiples, fio's default kb_base=1024;
// "10s", "500ms", "2m", "1h" and a bare number of seconds), booleans as 0/1 (fio) or true/false
// (kubectl), and a policy's bandwidths and fractions. One place for every unit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace iogate {

// `what` names the flag or field in the error message, e.g. "--bs"; the text is quoted cut to size
// (base/quote.h).
Result<uint64_t> parse_size(std::string_view text, std::string_view what);
Result<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string_view what);
// A whole number within [min, max].
Result<int64_t> parse_integer(std::string_view text, std::string_view what, int64_t min, int64_t max);
// "1"/"true" → true, "0"/"false" → false; nothing else (no yes/no/on/off: neither fio nor
// kubectl takes them, and a typo must not pass as a choice).
Result<bool> parse_bool(std::string_view text, std::string_view what);

// "4 KiB", "1 GiB", "1.5 MiB": for humans.
std::string format_bytes(double bytes);
// "438.7 MiB/s"
std::string format_rate_bytes(double bytes_per_s);
// 8120 → "8,120"; 1234567.8 → "1,234,568". Whole numbers, grouped by thousands.
std::string format_thousands(double n);
// "112.3k", "1.23M": for IOPS.
std::string format_count(double n);
// "250 µs", "1.20 ms", "5.1 s"
std::string format_duration_ns(double ns);
// "4k", "128k", "1m": the compact form fio prints for block sizes.
std::string format_size_compact(uint64_t bytes);

// Bandwidths: kB/s, MB/s, GB/s are decimal (10^6 bytes a second for MB/s, how cloud providers and
// disk vendors quote throughput); KiB/s, MiB/s, GiB/s are binary; a bare number is bytes a second.
// Block sizes ("4k", "1m") stay binary, as fio's.
// "500MB/s", "1.5 GiB/s", "524288000" → bytes a second. `what` names the field.
Result<uint64_t> parse_bandwidth(std::string_view text, std::string_view what);

// "3%" or "0.03" → 0.03. A bare number above 1 is refused: "3" could mean either.
Result<double> parse_fraction(std::string_view text, std::string_view what);

// Decimal like the thresholds users write: "500 MB/s", "1.25 GB/s", "812 kB/s".
std::string format_bandwidth_decimal(double bytes_per_s);

// The way durations are written in a policy: "1h", "90s", "500ms", "1.5s" (the largest unit that
// gives a whole number, else seconds with a fraction).
std::string format_duration_compact(int64_t ns);

// "3%", "2.5%".
std::string format_percent(double fraction);

}  // namespace iogate
