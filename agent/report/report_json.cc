#include "report/report_json.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "base/version.h"
#include "report/storage_report.h"

namespace iogate {
namespace {

using nlohmann::json;

// NaN and infinity would dump as null; the schema promises numbers.
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

double per_second(uint64_t amount, uint64_t runtime_ns) {
  return runtime_ns ? static_cast<double>(amount) / (static_cast<double>(runtime_ns) / 1e9) : 0.0;
}

// The value range containing `v` when each power of two is split into 2^bits equal parts
// (bits = 6 is the histogram's own resolution). Values below 2^(bits+1) are their own range.
LatencyHistogram::Bucket range_at_resolution(uint64_t v, int bits) {
  if (v < (uint64_t{2} << bits)) return {v, v, 0};
  int shift = (63 - __builtin_clzll(v)) - bits;
  uint64_t low = (v >> shift) << shift;
  return {low, low + ((uint64_t{1} << shift) - 1), 0};
}

// Non-empty buckets, coarsened until at most kReportHistogramRows remain. Coarsening halves the
// sub-buckets per power of two each step rather than merging arbitrary neighbours, so every row
// is still an aligned log-linear range and rows from different reports line up.
json histogram_rows(const LatencyHistogram& h) {
  std::vector<LatencyHistogram::Bucket> buckets = h.nonempty_buckets();
  std::vector<LatencyHistogram::Bucket> rows;
  for (int bits = LatencyHistogram::kSubBucketBits; bits >= 0; --bits) {
    rows.clear();
    for (const LatencyHistogram::Bucket& b : buckets) {
      LatencyHistogram::Bucket range = range_at_resolution(b.low_ns, bits);
      if (!rows.empty() && rows.back().low_ns == range.low_ns) {
        rows.back().count += b.count;
      } else {
        range.count = b.count;
        rows.push_back(range);
      }
    }
    if (rows.size() <= kReportHistogramRows) break;  // at bits = 0, one row per power of two
  }
  json out = json::array();
  for (const LatencyHistogram::Bucket& row : rows) out.push_back(json::array({row.low_ns, row.high_ns, row.count}));
  return out;
}

json direction_json(const DirectionStats& d, uint64_t runtime_ns) {
  json percentiles = json::object();
  for (double p : kReportPercentiles) percentiles[percentile_key(p)] = d.clat.percentile(p);
  return {
      {"total_ios", d.total_ios},
      {"io_bytes", d.io_bytes},
      {"iops", finite(per_second(d.total_ios, runtime_ns))},
      // fio's bw_bytes is a whole number of bytes per second.
      {"bw_bytes", static_cast<uint64_t>(std::llround(finite(per_second(d.io_bytes, runtime_ns))))},
      {"runtime_ns", runtime_ns},
      {"clat_ns",
       {{"min", d.clat.min()},
        {"max", d.clat.max()},
        {"mean", finite(d.clat.mean())},
        {"stddev", finite(d.clat.stddev())},
        {"N", d.clat.count()},
        {"percentile", percentiles}}},
      {"lat_histogram", histogram_rows(d.clat)},
  };
}

json job_json(const JobResult& j, const std::string& name) {
  return {
      {"jobname", name},
      {"job_id", j.job_id},
      {"job_runtime_ns", j.runtime_ns},
      {"read", direction_json(j.read, j.runtime_ns)},
      {"write", direction_json(j.write, j.runtime_ns)},
      {"iops_timeline", j.iops_per_second},
      {"submit_calls", j.submit_calls},
      {"reap_calls", j.reap_calls},
      {"refill_wait_ns", j.refill_wait_ns},
      {"submit_ns", j.submit_ns},
      {"mean_in_flight", finite(mean_in_flight(j))},
      {"mean_awaiting_refill", finite(mean_awaiting_refill(j))},
  };
}

json target_json(const ProbeTarget& t) {
  json files = json::array();
  for (const TargetFile& f : t.files) {
    files.push_back({{"path", utf8_or_replacement(f.path)},
                     {"size_bytes", f.size_bytes},
                     {"readable_bytes", f.readable_bytes},
                     {"extent_map", f.extent_map}});
  }
  return {
      {"path", utf8_or_replacement(t.path)},
      {"mount_point", utf8_or_replacement(t.mount_point)},
      {"fs_type", utf8_or_replacement(t.fs_type)},
      {"source", utf8_or_replacement(t.source)},
      {"device", fmt::format("{}:{}", t.dev_major, t.dev_minor)},
      {"read_only", t.read_only},
      {"page_cache", t.page_cache},
      {"test_file_created", t.test_file_created},
      {"test_file_reused", t.test_file_reused},
      {"files", files},
      {"dio_mem_align_bytes", t.dio_mem_align},
      {"dio_offset_align_bytes", t.dio_offset_align},
  };
}

json workload_json(const Workload& w, uint64_t seed) {
  return {
      {"rw", std::string(rw_mode_name(w.rw))},
      {"bs_bytes", w.block_size},
      {"iodepth", w.iodepth},
      {"iodepth_batch", w.iodepth_batch},
      {"numjobs", w.numjobs},
      {"rwmixread", w.rwmixread},
      {"runtime_ns", w.runtime.count()},
      {"ramp_ns", w.ramp.count()},
      {"size_bytes", w.size},
      {"direct", w.direct},  // as requested; the top-level "direct" is as run
      {"file", utf8_or_replacement(w.file)},
      {"seed", seed},
  };
}

json diskstats_json(const DiskStatsSummary& d) {
  json timeline = json::array();
  for (double u : d.util_percent_per_second) timeline.push_back(finite(u));
  return {
      {"available", d.available},
      {"device", utf8_or_replacement(d.device)},
      {"major", d.major},
      {"minor", d.minor},
      {"interval_ns", static_cast<uint64_t>(std::llround(std::max(0.0, finite(d.interval_s)) * 1e9))},
      {"util_percent", finite(d.util_percent)},
      {"reads_per_s", finite(d.reads_per_s)},
      {"writes_per_s", finite(d.writes_per_s)},
      {"read_bytes_per_s", finite(d.read_bytes_per_s)},
      {"write_bytes_per_s", finite(d.write_bytes_per_s)},
      {"r_await_ns", finite(d.r_await_ns)},
      {"w_await_ns", finite(d.w_await_ns)},
      {"aqu_sz", finite(d.avg_queue_size)},
      {"util_percent_timeline", timeline},
  };
}

// Always the same keys: with early stop off the rule's settings are still those the interval is
// judged by, and without a threshold threshold_iops is 0.
json convergence_json(const Convergence& c) {
  const EarlyStopConfig& e = c.early_stop;
  return {
      {"early_stop", e.enabled},
      {"tolerance", finite(e.tolerance)},
      {"confidence", finite(c.ci.confidence)},
      {"sample_interval_ns", static_cast<uint64_t>(std::max<int64_t>(0, e.sample_interval.count()))},
      {"min_window_ns", static_cast<uint64_t>(std::max<int64_t>(0, e.min_window.count()))},
      {"threshold_iops", finite(e.threshold_iops.value_or(0.0))},
      {"threshold_margin", finite(e.threshold_margin)},
      {"samples", c.ci.samples},
      {"batches", c.ci.batches},
      {"batch_samples", c.ci.batch_size},
      {"batch_lag1_correlation", finite(c.ci.batch_lag1)},
      {"trusted", c.ci.trusted},
      {"mean_iops", finite(c.ci.mean)},
      {"ci_half_width_iops", finite(c.ci.half_width)},
      {"ci_relative_half_width", finite(c.ci.relative_half_width)},
  };
}

}  // namespace

std::string percentile_key(double p) { return fmt::format("{:f}", p); }

std::string utf8_or_replacement(std::string_view s) {
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};  // rejects overlong forms
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    ok = ok && cp >= kMinForLength[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

nlohmann::json probe_result_to_json(const ProbeResult& r) {
  json jobs = json::array();
  for (const JobResult& j : r.jobs) jobs.push_back(job_json(j, fmt::format("job{}", j.job_id)));
  uint64_t ios = r.total_ios();
  double cpu_ns = static_cast<double>(r.cpu.user_ns) + static_cast<double>(r.cpu.sys_ns);
  json warnings = json::array();
  for (const std::string& w : r.warnings) warnings.push_back(utf8_or_replacement(w));
  return {
      {"schema", kReportSchema},
      {"iogate_version", kVersion},
      {"time", utf8_or_replacement(r.started_at)},
      {"mode", "probe"},
      {"target", target_json(r.target)},
      {"storage", storage_stack_to_json(r.storage)},
      {"workload", workload_json(r.workload, r.seed)},
      {"ioengine", utf8_or_replacement(r.ioengine)},
      {"direct", r.direct},
      {"jobs", jobs},
      {"aggregate", job_json(r.aggregate(), "all")},
      {"diskstats", diskstats_json(r.diskstats)},
      {"cpu",
       {{"user_ns", r.cpu.user_ns},
        {"sys_ns", r.cpu.sys_ns},
        {"ns_per_io", ios ? cpu_ns / static_cast<double>(ios) : 0.0}}},
      {"measured_ns", r.measured_ns},
      {"stop_reason", stop_reason_name(r.stop_reason)},
      {"convergence", convergence_json(r.convergence)},
      {"warnings", warnings},
  };
}

}  // namespace iogate
