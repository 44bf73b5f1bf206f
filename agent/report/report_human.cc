#include "report/report_human.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"

namespace iogate {
namespace {

constexpr size_t kTimelineColumns = 60;
constexpr int kLatencyRows = 12;
constexpr int kLatencyBarWidth = 40;

class Output {
 public:
  explicit Output(bool color) : color_(color) {}

  std::string bold(const std::string& s) const { return color_ ? "\033[1m" + s + "\033[0m" : s; }

  void fields(std::string_view label, const std::vector<std::string>& pieces) {
    add(wrap_pieces(label_column(label), pieces, "  ", kReportColumns, kLabelColumns));
  }
  void warning(std::string_view text) {
    for (const std::string& line : wrap_words(label_column("warning"), text, kReportColumns, kLabelColumns)) {
      text_ += color_ ? "\033[33m" + line + "\033[0m\n" : line + "\n";
    }
  }
  // A block of preformatted lines (the latency chart): `label` on the first, indented after.
  void block(std::string_view label, const std::string& lines) {
    std::string head = label_column(label);
    size_t start = 0;
    while (start < lines.size()) {
      size_t end = lines.find('\n', start);
      if (end == std::string::npos) end = lines.size();
      add(wrap_pieces(head, {lines.substr(start, end - start)}, "", kReportColumns, kLabelColumns));
      head = std::string(kLabelColumns, ' ');
      start = end + 1;
    }
  }
  void add(const std::vector<std::string>& lines) {
    for (const std::string& line : lines) text_ += line + "\n";
  }
  std::string take() { return std::move(text_); }

 private:
  bool color_;
  std::string text_;
};

// Durations as the user wrote them: "10 s", "500 ms".
std::string workload_duration(std::chrono::nanoseconds d) {
  if (d.count() % 1000000000 == 0) return fmt::format("{} s", d.count() / 1000000000);
  return format_duration_ns(static_cast<double>(d.count()));
}

double per_second(uint64_t amount, uint64_t runtime_ns) {
  return runtime_ns ? static_cast<double>(amount) / (static_cast<double>(runtime_ns) / 1e9) : 0.0;
}

// What was asked for and how it ran. A line of its own under the path: with the 16-digit seed it
// is ~95 columns already, and the path (often a long kubelet volume path) gets the first line.
std::vector<std::string> run_fields(const ProbeResult& r) {
  const Workload& w = r.workload;
  std::string what = fmt::format("{} {}", rw_mode_name(w.rw), format_size_compact(w.block_size));
  if (w.rw == RwMode::kRandRw) what += fmt::format(" {}/{}", w.rwmixread, 100 - w.rwmixread);  // fio: rwmixread
  std::string time = workload_duration(w.runtime);
  if (w.ramp.count() > 0) time += fmt::format(" (+{} ramp)", workload_duration(w.ramp));
  return {
      what,
      fmt::format("QD{} × {} job{}", w.iodepth, w.numjobs, w.numjobs == 1 ? "" : "s"),
      time,
      fmt::format("{}{}{}", r.ioengine, r.ioengine.empty() ? "" : " ", r.direct ? "direct" : "buffered"),
      fmt::format("seed {}", r.seed),
  };
}

std::vector<std::string> headline(const ProbeResult& r) {
  std::vector<std::string> out = {"iogate probe " + r.target.path};
  // An early stop is told on the interval's line.
  if (r.stop_reason != StopReason::kNone && r.stop_reason != StopReason::kRuntime && !is_early_stop(r.stop_reason)) {
    out.push_back(fmt::format("stopped by {} after {}", stop_reason_name(r.stop_reason),
                              format_duration_ns(static_cast<double>(r.measured_ns))));
  }
  return out;
}

std::vector<std::string> target_fields(const ProbeTarget& t) {
  std::string where = t.fs_type.empty() ? "unknown filesystem" : t.fs_type;
  if (!t.source.empty()) where += " on " + t.source;
  where += fmt::format(" ({}:{})", t.dev_major, t.dev_minor);
  std::vector<std::string> out = {where};
  if (!t.mount_point.empty()) out.push_back("mounted at " + t.mount_point);
  if (t.read_only) out.push_back("read-only");
  if ((t.test_file_created || t.test_file_reused) && !t.files.empty()) {
    out.push_back(fmt::format("test file {} ({})", format_bytes(static_cast<double>(t.files[0].size_bytes)),
                              t.test_file_created ? "created" : "reused"));
  } else if (t.files.size() == 1) {
    const TargetFile& f = t.files[0];
    out.push_back("file " + f.path);
    if (f.readable_bytes == f.size_bytes) {
      out.push_back(format_bytes(static_cast<double>(f.size_bytes)));
    } else {
      out.push_back(fmt::format("{} of {} readable", format_bytes(static_cast<double>(f.readable_bytes)),
                                format_bytes(static_cast<double>(f.size_bytes))));
    }
  } else if (t.files.size() > 1) {
    uint64_t readable = 0;
    for (const TargetFile& f : t.files) readable += f.readable_bytes;
    out.push_back(
        fmt::format("{} existing files, {} readable", t.files.size(), format_bytes(static_cast<double>(readable))));
  }
  return out;
}

std::vector<std::string> direction_fields(const Output& o, const DirectionStats& d, uint64_t runtime_ns) {
  auto lat = [&](double ns) { return format_duration_ns(ns); };
  auto pct = [&](double p) { return lat(static_cast<double>(d.clat.percentile(p))); };
  return {
      o.bold(format_count(per_second(d.total_ios, runtime_ns))) + " IOPS",
      o.bold(format_rate_bytes(per_second(d.io_bytes, runtime_ns))),
      "mean " + lat(d.clat.mean()),
      "p50 " + pct(50),
      "p99 " + o.bold(pct(99)),
      "p99.9 " + pct(99.9),
      "max " + lat(static_cast<double>(d.clat.max())),
  };
}

std::vector<std::string> timeline_fields(const std::vector<uint64_t>& per_second_iops) {
  auto [lo, hi] = std::minmax_element(per_second_iops.begin(), per_second_iops.end());
  std::vector<std::string> out = {
      render_sparkline(per_second_iops, kTimelineColumns),
      "min " + format_count(static_cast<double>(*lo)),
      "max " + format_count(static_cast<double>(*hi)),
  };
  return out;
}

// "IOPS/s": one block per second; "IOPS/5s" when each block averages five seconds.
std::string timeline_label(size_t seconds) {
  size_t group = sparkline_values_per_column(seconds, kTimelineColumns);
  return group == 1 ? "IOPS/s" : fmt::format("IOPS/{}s", group);
}

// "95% CI": the interval of the mean IOPS, how it was built, and why the run stopped when it did:
// "±1.8% of 112.3k IOPS  42 samples, 21 batches  stopped early: settled after 2.4 s".
std::string interval_label(const ConfidenceInterval& ci) { return fmt::format("{:g}% CI", ci.confidence * 100); }

std::vector<std::string> interval_fields(const ProbeResult& r) {
  const ConfidenceInterval& ci = r.convergence.ci;
  const EarlyStopConfig& es = r.convergence.early_stop;
  if (ci.batches == 0) return {fmt::format("too few samples for an interval ({})", ci.samples)};
  std::vector<std::string> out = {
      fmt::format("±{:.1f}% of {} IOPS", ci.relative_half_width * 100, format_count(ci.mean)),
      ci.batch_size > 1 ? fmt::format("{} samples, {} batches of {}", ci.samples, ci.batches, ci.batch_size)
                        : fmt::format("{} samples, {} batches", ci.samples, ci.batches),
  };
  if (!ci.trusted) {
    out.push_back(ci.batches < EarlyStop::kMinBatches
                      ? std::string("too few batches to trust")
                      : fmt::format("not trusted: batch means correlated (r {:.2f})", ci.batch_lag1));
  }
  std::string after = format_duration_ns(static_cast<double>(r.measured_ns));
  std::string threshold = format_count(es.threshold_iops.value_or(0));
  if (r.stop_reason == StopReason::kSettled) {
    out.push_back(fmt::format("stopped early: settled within ±{:g}% after {}", es.tolerance * 100, after));
  } else if (r.stop_reason == StopReason::kAboveThreshold) {
    out.push_back(fmt::format("stopped early: clearly above {} IOPS after {}", threshold, after));
  } else if (r.stop_reason == StopReason::kBelowThreshold) {
    out.push_back(fmt::format("stopped early: clearly below {} IOPS after {}", threshold, after));
  } else if (es.enabled && r.stop_reason == StopReason::kRuntime) {
    out.push_back(fmt::format("not settled within ±{:g}% by the {} limit", es.tolerance * 100, after));
  }
  return out;
}

std::vector<std::string> device_fields(const DiskStatsSummary& d) {
  std::vector<std::string> out = {
      d.device.empty() ? fmt::format("{}:{}", d.major, d.minor) : d.device,
      fmt::format("util {:.1f}%", d.util_percent),
      fmt::format("aqu-sz {:.1f}", d.avg_queue_size),
  };
  bool reads = d.reads_per_s > 0, writes = d.writes_per_s > 0;
  if (reads || !writes) {
    out.push_back("r/s " + format_count(d.reads_per_s));
    if (reads) out.push_back("r_await " + format_duration_ns(d.r_await_ns));
  }
  if (writes) {
    out.push_back("w/s " + format_count(d.writes_per_s));
    out.push_back("w_await " + format_duration_ns(d.w_await_ns));
  }
  return out;
}

}  // namespace

std::string render_probe_human(const ProbeResult& r, bool color) {
  Output o(color);
  o.add(wrap_pieces("", headline(r), "  ", kReportColumns, kLabelColumns));
  o.fields("run", run_fields(r));
  o.fields("target", target_fields(r.target));
  o.fields("storage", {std::string(device_class_name(r.storage.device_class)), r.storage.reason});

  JobResult all = r.aggregate();
  bool reads = all.read.total_ios > 0, writes = all.write.total_ios > 0;
  if (!reads && !writes) o.fields("result", {"no I/O completed"});
  if (reads) o.fields("read", direction_fields(o, all.read, all.runtime_ns));
  if (writes) o.fields("write", direction_fields(o, all.write, all.runtime_ns));
  if (!all.iops_per_second.empty())
    o.fields(timeline_label(all.iops_per_second.size()), timeline_fields(all.iops_per_second));
  if (reads || writes) o.fields(interval_label(r.convergence.ci), interval_fields(r));
  if (reads) {
    o.block(writes ? "r lat" : "latency", render_latency_histogram(all.read.clat, kLatencyRows, kLatencyBarWidth));
  }
  if (writes) {
    o.block(reads ? "w lat" : "latency", render_latency_histogram(all.write.clat, kLatencyRows, kLatencyBarWidth));
  }

  if (r.diskstats.available) {
    o.fields("device", device_fields(r.diskstats));
  } else {
    std::string fs = r.target.fs_type.empty() ? "unknown filesystem" : r.target.fs_type;
    o.fields("device", {fmt::format("no block device statistics ({})", fs)});
  }

  uint64_t ios = r.total_ios();
  std::vector<std::string> cpu = {"user " + format_duration_ns(static_cast<double>(r.cpu.user_ns)),
                                  "sys " + format_duration_ns(static_cast<double>(r.cpu.sys_ns))};
  if (ios) {
    double per_io = (static_cast<double>(r.cpu.user_ns) + static_cast<double>(r.cpu.sys_ns)) / static_cast<double>(ios);
    cpu.push_back(format_duration_ns(per_io) + " per I/O");
  }
  o.fields("cpu", cpu);

  for (const std::string& w : r.warnings) o.warning(w);
  return o.take();
}

}  // namespace iogate
