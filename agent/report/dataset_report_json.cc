#include <algorithm>
#include <cmath>

#include "base/version.h"
#include "report/dataset_report.h"
#include "report/report_json.h"
#include "report/storage_report.h"

namespace iogate {
namespace {

using nlohmann::json;

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

json latency_json(const LatencyHistogram& h) {
  return {{"min", h.min()},          {"mean", finite(h.mean())}, {"p50", h.percentile(50)},
          {"p90", h.percentile(90)}, {"p99", h.percentile(99)},  {"p99_9", h.percentile(99.9)},
          {"max", h.max()},          {"count", h.count()}};
}

json run_json(const LoaderRun& l) {
  json notes = json::array();
  for (const std::string& n : l.notes) notes.push_back(utf8_or_replacement(n));
  return {{"workers", l.workers},
          {"direct", l.direct},
          {"samples_per_s", finite(l.samples_per_s())},
          {"bytes_per_s", finite(l.bytes_per_s())},
          {"files_read", l.files_read},
          {"bytes_read", l.bytes_read},
          {"partial_bytes", l.partial_bytes},
          {"errors", l.errors},
          {"first_error", utf8_or_replacement(l.first_error)},
          {"elapsed_ns", l.elapsed_ns},
          {"cpu_ns", l.cpu_ns},
          {"stop_reason", stop_reason_name(l.stop_reason)},
          {"open_ns", latency_json(l.open_ns)},
          {"first_byte_ns", latency_json(l.first_byte_ns)},
          {"file_ns", latency_json(l.file_ns)},
          {"notes", notes}};
}

json point_json(const std::optional<FeedPoint>& p) {
  if (!p) return nullptr;
  return {{"workers", p->workers},
          {"files", p->files},
          {"requests", p->requests},
          {"bytes", p->bytes},
          {"elapsed_ns", p->elapsed_ns},
          {"files_per_s", finite(p->files_per_s())},
          {"requests_per_s", finite(p->requests_per_s())},
          {"bytes_per_s", finite(p->bytes_per_s())}};
}

json limit_json(const DatasetProbeResult& r) {
  return {{"resource", feed_limit_name(r.limit.limit)},
          {"why", utf8_or_replacement(r.limit.why)},
          {"points",
           {{"whole", point_json(r.limit_points.whole)},
            {"halves", point_json(r.limit_points.halves)},
            {"doubled", point_json(r.limit_points.doubled)}}}};
}

json metadata_json(const DatasetProbeResult& r) {
  const MetadataEpoch& m = r.metadata;
  const LoaderRun* cold = r.loader();
  return {{"measured", m.measured},
          {"headline", "cold"},
          {"cold_samples_per_s", finite(cold ? cold->samples_per_s() : 0)},
          {"warm_samples_per_s", finite(m.measured ? m.warm.samples_per_s() : 0)},
          {"files_looked_up", m.files_looked_up},
          {"lookup_ns", latency_json(m.lookup_ns)},
          {"warm", m.measured ? run_json(m.warm) : json(nullptr)}};
}

json dataset_json(const DatasetScan& s) {
  json depths = json::array();
  for (size_t d = 0; d < s.depths.size(); ++d) {
    const DepthStats& x = s.depths[d];
    depths.push_back({{"depth", d},
                      {"dirs_read", x.dirs_read},
                      {"dirs_pending", x.dirs_pending},
                      {"files", x.files},
                      {"subdirs", x.subdirs}});
  }
  uint64_t pending = 0;
  for (const DepthStats& x : s.depths) pending += x.dirs_pending;
  json denied = json::array();
  for (const std::string& p : s.permission_denied_paths) denied.push_back(utf8_or_replacement(p));
  return {{"root", utf8_or_replacement(s.root)},
          {"files_estimate", static_cast<uint64_t>(std::llround(std::max(0.0, finite(s.files_estimate))))},
          {"files_exact", s.files_exact},
          {"files_seen", s.files_seen},
          {"files_sampled", s.sample.size()},
          {"files_sized", s.files_sized},
          {"bytes_estimate", static_cast<uint64_t>(std::llround(std::max(0.0, finite(s.bytes_estimate))))},
          {"estimate_method", s.estimate_method},
          {"file_size_bytes",
           {{"p10", s.sizes.p10},
            {"p50", s.sizes.p50},
            {"p90", s.sizes.p90},
            {"p99", s.sizes.p99},
            {"max", s.sizes.max},
            {"mean", finite(s.sizes.mean)}}},
          {"dirs_scanned", s.dirs_read},
          {"dirs_pending", pending},
          {"entries_read", s.entries_read},
          {"max_dir_entries", s.max_dir_entries},
          {"fanout",
           {{"mean_subdirs_per_dir", finite(s.mean_subdirs_per_dir())},
            {"mean_files_per_dir", finite(s.mean_files_per_dir())},
            {"depths", depths}}},
          {"permission_denied", s.permission_denied},
          {"permission_denied_paths", denied},
          {"symlinks_skipped", s.symlinks_skipped},
          {"other_skipped", s.other_skipped},
          {"vanished", s.vanished},
          {"scan_stop_reason", stop_reason_name(s.stop_reason)},
          {"scan_ns", s.elapsed_ns}};
}

}  // namespace

nlohmann::json dataset_probe_to_json(const DatasetProbeResult& r) {
  LoaderRun none;
  const LoaderRun& head = r.loader() ? *r.loader() : none;
  json loader = run_json(head);
  json sweep = json::array();
  for (const LoaderRun& l : r.sweep) sweep.push_back(run_json(l));
  loader["knee_workers"] = r.knee_workers;
  loader["sweep"] = sweep;
  json recommendations = json::array();
  for (const Recommendation& rec : r.recommendations) {
    json evidence = json::object();
    for (const auto& [key, value] : rec.evidence) evidence[key] = finite(value);
    recommendations.push_back({{"id", rec.id}, {"message", utf8_or_replacement(rec.message)}, {"evidence", evidence}});
  }
  json warnings = json::array();
  for (const std::string& w : r.warnings) warnings.push_back(utf8_or_replacement(w));
  return {{"schema", kReportSchema},
          {"iogate_version", kVersion},
          {"time", r.started_at},
          {"mode", "dataset"},
          {"target", {{"path", utf8_or_replacement(r.path)}}},
          {"storage", storage_stack_to_json(r.storage)},
          {"seed", r.seed},
          {"page_cache", r.page_cache},
          {"dataset", dataset_json(r.scan)},
          {"loader", loader},
          {"metadata", metadata_json(r)},
          {"limit", limit_json(r)},
          {"recommendations", recommendations},
          {"cpus", r.cpus},
          {"mem_total_bytes", r.mem_total_bytes},
          {"stop_reason", stop_reason_name(r.stop_reason)},
          {"warnings", warnings}};
}

}  // namespace iogate
