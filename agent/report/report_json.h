// A probe's result as JSON, schema "iogate.report/v1" (documented in docs/reference.md, "Probe report").
//
// The readers are fio users and their scripts, so where a concept is the same as fio's the key is
// fio's ("total_ios", "bw_bytes", "clat_ns", "percentile" with "99.900000"-style keys, "N"). Every
// key is always present with one JSON type: a consumer never has to test for absence or null.
// Units are in the key's suffix (_ns, _bytes, _per_s); times are RFC 3339 UTC.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "probe/probe_result.h"

namespace iogate {

inline constexpr const char* kReportSchema = "iogate.report/v1";

// The percentiles reported in every "clat_ns.percentile" object, in this order.
inline constexpr double kReportPercentiles[] = {1, 5, 10, 50, 90, 95, 99, 99.9, 99.99};

// A percentile's key the way fio writes it: printf("%f"), e.g. 99.9 -> "99.900000".
std::string percentile_key(double p);

// nlohmann::json::dump() throws on invalid UTF-8, and Linux paths are arbitrary bytes: each byte
// that does not start a well-formed sequence becomes U+FFFD, so that a report always prints.
std::string utf8_or_replacement(std::string_view s);

// The JSON histogram keeps at most this many [low_ns, high_ns, count] rows.
inline constexpr size_t kReportHistogramRows = 64;

nlohmann::json probe_result_to_json(const ProbeResult& r);

}  // namespace iogate
