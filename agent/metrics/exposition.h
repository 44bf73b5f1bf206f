// The Prometheus text exposition format, version 0.0.4 (what /metrics serves and promtool checks):
// one "# HELP" and one "# TYPE" line per family, then its samples, label values escaped
// (backslash, double quote, newline), values as Go's strconv prints them (shortest round trip,
// "NaN", "+Inf", "-Inf").
//
// Families are plain data so each exporter builds them from its own state under its own lock and
// renders outside it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iogate {

// kSummary is for quantiles someone else computed (a probe's latency percentiles): its samples
// carry a "quantile" label, which promtool rejects on any other type, and may go without _sum and
// _count, which the text format and OpenMetrics both allow.
// kHistogram is for buckets counted here (metrics/histogram.h): its samples carry a suffix
// (_bucket with an "le" label, _sum, _count).
enum class MetricType { kGauge, kCounter, kSummary, kHistogram };
std::string_view metric_type_name(MetricType t);  // "gauge", "counter", "summary", "histogram"

using MetricLabels = std::vector<std::pair<std::string, std::string>>;  // in output order

struct MetricSample {
  MetricLabels labels;
  double value = 0;
  std::string suffix;  // after the family's name: "_bucket", "_sum", "_count"; "" for most
};

struct MetricFamily {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*; counters end in _total
  std::string help;  // one line
  MetricType type = MetricType::kGauge;
  std::vector<MetricSample> samples;  // a family without samples still prints HELP and TYPE
};

// A family with no samples yet: what every exporter starts each of its families from.
MetricFamily metric_family(std::string name, MetricType type, std::string help);

// The content type /metrics answers with.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// Renders the families in order. Names are not checked here (see valid_metric_name): families are
// built by code, not from input.
std::string render_exposition(const std::vector<MetricFamily>& families);

std::string escape_label_value(std::string_view v);  // \ → \\, " → \", newline → \n
std::string escape_help(std::string_view v);         // \ → \\, newline → \n
std::string format_sample_value(double v);           // 1, 0.5, 1e+06, NaN, +Inf, -Inf

// iogate_build_info{version} 1: the version serving the metrics, in every exporter's output.
MetricFamily build_info_family(const std::string& version);

bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);  // [a-zA-Z_][a-zA-Z0-9_]*, not starting with __

}  // namespace iogate
