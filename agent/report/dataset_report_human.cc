#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"
#include "report/dataset_report.h"

namespace iogate {
namespace {

std::string line(std::string_view label, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& l : wrap_pieces(label_column(label), pieces, "  ", kReportColumns, kLabelColumns)) {
    out += l + "\n";
  }
  return out;
}

std::string words(std::string_view label, std::string_view text) {
  std::string out;
  for (const std::string& l : wrap_words(label_column(label), text, kReportColumns, kLabelColumns)) out += l + "\n";
  return out;
}

std::string p50_p99(std::string_view name, const LatencyHistogram& h) {
  return fmt::format("{} p50 {} p99 {}", name, format_duration_ns(double(h.percentile(50))),
                     format_duration_ns(double(h.percentile(99))));
}

std::string count_text(double n) { return fmt::format("{:L}", static_cast<uint64_t>(std::llround(n))); }

}  // namespace

std::string render_dataset_human(const DatasetProbeResult& r, bool color) {
  auto bold = [&](const std::string& s) { return color ? "\033[1m" + s + "\033[0m" : s; };
  const DatasetScan& s = r.scan;
  std::string out;
  out += line("dataset", {fmt::format("{} files ({})", count_text(s.files_estimate),
                                      s.files_exact  ? "exact"
                                      : s.complete() ? "exact"
                                                     : "estimated"),
                          format_bytes(s.bytes_estimate), fmt::format("{} dirs", count_text(double(s.dirs_read))),
                          fmt::format("{:.1f} files/dir", s.mean_files_per_dir()),
                          fmt::format("{:.1f} subdirs/dir", s.mean_subdirs_per_dir()),
                          fmt::format("scan {}", format_duration_ns(double(s.elapsed_ns)))});
  out += line("sizes", {fmt::format("p10 {}", format_bytes(double(s.sizes.p10))),
                        fmt::format("p50 {}", format_bytes(double(s.sizes.p50))),
                        fmt::format("p90 {}", format_bytes(double(s.sizes.p90))),
                        fmt::format("p99 {}", format_bytes(double(s.sizes.p99))),
                        fmt::format("max {}", format_bytes(double(s.sizes.max))),
                        fmt::format("({} sampled)", count_text(double(s.sample.size())))});
  std::string where = r.storage.mount.fs_type.empty() ? "unknown filesystem" : r.storage.mount.fs_type;
  if (!r.storage.mount.source.empty()) where += " on " + r.storage.mount.source;
  out += line("storage", {where, std::string(device_class_name(r.storage.device_class))});
  if (const LoaderRun* l = r.loader()) {
    out += line(
        "loader",
        {fmt::format("{} workers", l->workers), bold(fmt::format("{} samples/s", format_count(l->samples_per_s()))),
         format_rate_bytes(l->bytes_per_s()), l->direct ? "O_DIRECT" : "buffered + DONTNEED",
         fmt::format("{} files in {}", count_text(double(l->files_read)), format_duration_ns(double(l->elapsed_ns)))});
    out += line("latency",
                {p50_p99("open", l->open_ns), p50_p99("first byte", l->first_byte_ns), p50_p99("file", l->file_ns)});
    if (r.metadata.measured) {
      out += line("metadata", {fmt::format("first epoch (lookups cold) {} samples/s", format_count(l->samples_per_s())),
                               fmt::format("cached {} samples/s", format_count(r.metadata.warm.samples_per_s())),
                               p50_p99("lookup", r.metadata.lookup_ns)});
    }
  }
  if (r.sweep.size() > 1) {
    std::string table = fmt::format("{:>7}  {:>10}  {:>12}  {:>10}  {:>10}  {:>6}\n", "workers", "samples/s", "bytes/s",
                                    "file p50", "file p99", "gain");
    for (size_t i = 0; i < r.sweep.size(); ++i) {
      const LoaderRun& l = r.sweep[i];
      double before = i ? r.sweep[i - 1].samples_per_s() : 0;
      std::string gain = before > 0 ? fmt::format("{:+.0f}%", 100 * (l.samples_per_s() / before - 1)) : "";
      table += fmt::format("{:>7}  {:>10}  {:>12}  {:>10}  {:>10}  {:>6}\n", l.workers, format_count(l.samples_per_s()),
                           format_rate_bytes(l.bytes_per_s()), format_duration_ns(double(l.file_ns.percentile(50))),
                           format_duration_ns(double(l.file_ns.percentile(99))), gain);
    }
    std::string head = label_column("sweep");
    std::string pad(kLabelColumns, ' ');
    bool first = true;
    size_t start = 0;
    while (start < table.size()) {
      size_t end = table.find('\n', start);
      out += (first ? head : pad) + table.substr(start, end - start) + "\n";
      first = false;
      start = end + 1;
    }
    bool last = r.knee_workers == r.sweep.back().workers;
    out += words("", last ? fmt::format("still scaling at {} workers, the most tried", r.knee_workers)
                          : fmt::format("scaling stops at {} workers (no count tried gives 10% more)", r.knee_workers));
  }
  if (r.loader())
    out += words("limit", fmt::format("{}: {}", bold(std::string(feed_limit_name(r.limit.limit))), r.limit.why));
  for (const Recommendation& rec : r.recommendations)
    out += words("advice", fmt::format("[{}] {}", rec.id, rec.message));
  for (const std::string& w : r.warnings) {
    std::string text = words("warning", w);
    out += color ? "\033[33m" + text + "\033[0m" : text;
  }
  return out;
}

}  // namespace iogate
