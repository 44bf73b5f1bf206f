// Small charts made of Unicode block characters, for the human report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "probe/latency_histogram.h"

namespace iogate {

// One block (▁▂▃▄▅▆▇█) per value, height proportional to value / max(values) so that a 5% dip
// looks like 5% and a stall to zero looks like the floor. With more than `max_width` values,
// each column is the average of ceil(n / max_width) consecutive values. Empty input: "".
std::string render_sparkline(const std::vector<uint64_t>& values, size_t max_width);

// How many values render_sparkline puts in each column for `count` values.
size_t sparkline_values_per_column(size_t count, size_t max_width);

// The latency distribution as at most `max_rows` lines of
//   "  128 µs – 256 µs  ████████████▌   51.2%\n"
// Row boundaries are round numbers (1-2-5 steps, or finer ladders such as 1-1.5-2.5-4-6 when the
// samples span a narrow range): the finest ladder whose rows from fastest to slowest sample fit
// in `max_rows` is used, and empty rows in between are kept so that gaps show. Bars are scaled to
// the fullest row, at most `bar_width` columns, in eighths of a block. Empty histogram: "".
std::string render_latency_histogram(const LatencyHistogram& h, int max_rows, int bar_width);

}  // namespace iogate
