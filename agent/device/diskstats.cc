#include "device/diskstats.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "device/kernel_file.h"

namespace iogate {

namespace {

// Fields split on runs of blanks: the kernel right-aligns major and minor ("%4d %7d %s ...").
std::vector<std::string_view> split_blanks(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <typename T>
bool parse_number(std::string_view s, T* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_line(std::string_view line, DiskStats* d) {
  std::vector<std::string_view> f = split_blanks(line);
  constexpr size_t kMinFields = 14;
  if (f.size() < kMinFields) return false;
  if (!parse_number(f[0], &d->major) || !parse_number(f[1], &d->minor)) return false;
  d->name = std::string(f[2]);
  // In the order of iostats.rst, fields 1 to 17.
  uint64_t* counters[] = {
      &d->reads_completed,   &d->reads_merged,       &d->sectors_read,    &d->read_ticks_ms,     &d->writes_completed,
      &d->writes_merged,     &d->sectors_written,    &d->write_ticks_ms,  &d->in_flight,         &d->io_ticks_ms,
      &d->time_in_queue_ms,  &d->discards_completed, &d->discards_merged, &d->sectors_discarded, &d->discard_ticks_ms,
      &d->flushes_completed, &d->flush_ticks_ms,
  };
  const size_t n = std::min(f.size() - 3, std::size(counters));
  for (size_t i = 0; i < n; ++i) {
    if (!parse_number(f[3 + i], counters[i])) return false;
  }
  return true;
}

// after - before, or 0 when the counter went backwards.
double delta(uint64_t before, uint64_t after) { return after >= before ? double(after - before) : 0.0; }

// Δticks / Δcompleted in ns; 0 when either counter went backwards or nothing completed.
double await_ns(uint64_t ticks_before, uint64_t ticks_after, uint64_t done_before, uint64_t done_after) {
  double done = delta(done_before, done_after);
  if (done <= 0 || ticks_after < ticks_before) return 0;
  return delta(ticks_before, ticks_after) * 1e6 / done;
}

}  // namespace

std::vector<DiskStats> parse_diskstats(std::string_view text) {
  std::vector<DiskStats> out;
  for (std::string_view line : split_kernel_lines(text)) {
    DiskStats d;
    if (parse_line(line, &d)) out.push_back(std::move(d));
  }
  return out;
}

Result<DiskStats> read_diskstats_for(uint32_t major, uint32_t minor, const std::string& proc_root) {
  const std::string path = proc_root + "/diskstats";
  auto text = read_kernel_file(path);
  if (!text.ok()) return text.error();
  for (DiskStats& d : parse_diskstats(*text)) {
    if (d.major == major && d.minor == minor) return std::move(d);
  }
  return runtime_error(fmt::format("no line for device {}:{} in {}", major, minor, path));
}

IostatFigures iostat_between(const DiskStats& before, const DiskStats& after, double interval_s) {
  IostatFigures f;
  if (!(interval_s > 0) || !std::isfinite(interval_s)) return f;
  const double interval_ms = interval_s * 1000.0;
  f.reads_per_s = delta(before.reads_completed, after.reads_completed) / interval_s;
  f.writes_per_s = delta(before.writes_completed, after.writes_completed) / interval_s;
  f.read_bytes_per_s = delta(before.sectors_read, after.sectors_read) * 512.0 / interval_s;
  f.write_bytes_per_s = delta(before.sectors_written, after.sectors_written) * 512.0 / interval_s;
  f.r_await_ns = await_ns(before.read_ticks_ms, after.read_ticks_ms, before.reads_completed, after.reads_completed);
  f.w_await_ns = await_ns(before.write_ticks_ms, after.write_ticks_ms, before.writes_completed, after.writes_completed);
  // io_ticks can run slightly ahead of wall time between two reads of the file: clamp.
  f.util_percent = std::clamp(delta(before.io_ticks_ms, after.io_ticks_ms) * 100.0 / interval_ms, 0.0, 100.0);
  f.avg_queue_size = delta(before.time_in_queue_ms, after.time_in_queue_ms) / interval_ms;
  return f;
}

}  // namespace iogate
