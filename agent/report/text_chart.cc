#include "report/text_chart.h"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"

namespace iogate {
namespace {

constexpr const char* kLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
constexpr const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};

// Row boundaries within each decade, finest first. Each step is about 2x or less, and every
// boundary prints as a short round number (1.5 ms, 250 µs, 6.00 ms).
constexpr double kTenths[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8};
constexpr double kFifths[] = {1, 1.5, 2.5, 4, 6};
constexpr double kOneTwoFive[] = {1, 2, 5};
constexpr double kOneThree[] = {1, 3};
constexpr double kDecades[] = {1};
constexpr std::span<const double> kLadders[] = {kTenths, kFifths, kOneTwoFive, kOneThree, kDecades};

struct Row {
  uint64_t low_ns;   // inclusive
  uint64_t high_ns;  // exclusive
  uint64_t count;
};

// 0, then the ladder's steps in every decade from 1 ns until one boundary exceeds `max_ns`.
std::vector<uint64_t> boundaries(std::span<const double> ladder, uint64_t max_ns) {
  std::vector<uint64_t> out = {0};
  for (double decade = 1; out.back() <= max_ns && decade < 1e20; decade *= 10) {
    for (double step : ladder) {
      auto b = static_cast<uint64_t>(std::llround(step * decade));
      if (b > out.back()) out.push_back(b);  // rounding makes the lowest steps coincide
      if (out.back() > max_ns) break;
    }
  }
  return out;
}

size_t row_of(const std::vector<uint64_t>& bounds, uint64_t v) {
  return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), v) - bounds.begin()) - 1;
}

// A bucket's representative value: its midpoint, clamped to the samples' range so that the
// fastest and slowest samples land in the rows that really contain them.
uint64_t representative(const LatencyHistogram& h, const LatencyHistogram::Bucket& b) {
  return std::clamp(b.low_ns + (b.high_ns - b.low_ns) / 2, h.min(), h.max());
}

std::vector<Row> chart_rows(const LatencyHistogram& h, size_t max_rows) {
  std::vector<LatencyHistogram::Bucket> buckets = h.nonempty_buckets();
  std::vector<uint64_t> bounds;
  size_t first = 0, last = 0;
  for (std::span<const double> ladder : kLadders) {
    bounds = boundaries(ladder, h.max());
    first = row_of(bounds, representative(h, buckets.front()));
    last = row_of(bounds, representative(h, buckets.back()));
    if (last - first + 1 <= max_rows) break;
  }
  std::vector<Row> rows;
  for (size_t i = first; i <= last; ++i) rows.push_back({bounds[i], bounds[i + 1], 0});
  for (const LatencyHistogram::Bucket& b : buckets) rows[row_of(bounds, representative(h, b)) - first].count += b.count;
  // Twenty decades of nanoseconds would not fit a tiny max_rows even in decades: merge neighbours.
  if (rows.size() > max_rows) {
    size_t group = (rows.size() + max_rows - 1) / max_rows;
    std::vector<Row> merged;
    for (size_t i = 0; i < rows.size(); i += group) {
      Row m = rows[i];
      for (size_t k = i + 1; k < std::min(rows.size(), i + group); ++k) {
        m.high_ns = rows[k].high_ns;
        m.count += rows[k].count;
      }
      merged.push_back(m);
    }
    rows = std::move(merged);
  }
  return rows;
}

std::string bar(uint64_t count, uint64_t max_count, size_t width) {
  auto eighths = static_cast<uint64_t>(
      std::llround(static_cast<double>(count) / static_cast<double>(max_count) * static_cast<double>(width * 8)));
  if (count > 0 && eighths == 0) eighths = 1;  // a rare tail row stays visible
  std::string out;
  for (uint64_t i = 0; i < eighths / 8; ++i) out += kLevels[7];
  out += kEighths[eighths % 8];
  return out;
}

std::string percent(uint64_t count, uint64_t total) {
  double pct = 100.0 * static_cast<double>(count) / static_cast<double>(total);
  if (count > 0 && pct < 0.05) return "<0.1%";
  return fmt::format("{:.1f}%", pct);
}

}  // namespace

size_t sparkline_values_per_column(size_t count, size_t max_width) {
  if (max_width == 0 || count <= max_width) return 1;
  return (count + max_width - 1) / max_width;
}

std::string render_sparkline(const std::vector<uint64_t>& values, size_t max_width) {
  if (values.empty() || max_width == 0) return "";
  size_t group = sparkline_values_per_column(values.size(), max_width);
  std::vector<double> columns;
  for (size_t i = 0; i < values.size(); i += group) {
    size_t end = std::min(values.size(), i + group);
    double sum = 0;
    for (size_t k = i; k < end; ++k) sum += static_cast<double>(values[k]);
    columns.push_back(sum / static_cast<double>(end - i));
  }
  double top = *std::max_element(columns.begin(), columns.end());
  std::string out;
  for (double c : columns) out += kLevels[top > 0 ? std::lround(c / top * 7) : 0];
  return out;
}

std::string render_latency_histogram(const LatencyHistogram& h, int max_rows, int bar_width) {
  if (h.count() == 0 || max_rows < 1) return "";
  std::vector<Row> rows = chart_rows(h, static_cast<size_t>(max_rows));
  size_t low_width = 0, high_width = 0;
  uint64_t max_count = 0;
  for (const Row& r : rows) {
    low_width = std::max(low_width, display_width(format_duration_ns(static_cast<double>(r.low_ns))));
    high_width = std::max(high_width, display_width(format_duration_ns(static_cast<double>(r.high_ns))));
    max_count = std::max(max_count, r.count);
  }
  size_t width = static_cast<size_t>(std::max(bar_width, 1));
  std::string out;
  for (const Row& r : rows) {
    out += pad_left(format_duration_ns(static_cast<double>(r.low_ns)), low_width + 2);
    out += " – ";
    out += pad_right(format_duration_ns(static_cast<double>(r.high_ns)), high_width);
    out += "  ";
    out += pad_right(bar(r.count, max_count, width), width);
    out += pad_left(percent(r.count, h.count()), 8);
    out += "\n";
  }
  return out;
}

}  // namespace iogate
