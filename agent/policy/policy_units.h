// The value syntaxes a policy adds to base/units.h's sizes and durations: bandwidths, fractions,
// and the numbers people read in a verdict ("10,000 IOPS", "500 MB/s").
//
// Bandwidth suffixes follow their names: kB/s, MB/s, GB/s are decimal (10^6 bytes a second for
// MB/s, how cloud providers and disk vendors quote throughput); KiB/s, MiB/s, GiB/s are binary.
// A bare number is bytes a second. fio's sizes ("4k", "1m") stay binary: they are block sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/units.h"  // format_thousands, once declared here

namespace iogate {

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

// "NoSchedule", "PreferNoSchedule", "NoExecute" as given (the API's spelling), or "none" → "".
Result<std::string> parse_taint_effect(std::string_view text, std::string_view what);

// The Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace iogate
