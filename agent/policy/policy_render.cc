#include "policy/policy_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"
#include "policy/evaluate.h"

namespace iogate {
namespace {

std::vector<std::string> class_names(const std::vector<DeviceClass>& classes) {
  std::vector<std::string> out;
  for (DeviceClass c : classes) out.emplace_back(device_class_name(c));
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

nlohmann::json workload_json(const Policy& p) {
  const Workload& w = p.workload;
  if (p.workload_mode != WorkloadMode::kIo) {
    const DatasetWorkload& d = p.dataset;
    nlohmann::json j = {{"mode", workload_mode_name(p.workload_mode)},
                        {"workers", d.workers},
                        {"sample", d.sample},
                        {"scan_time_ns", d.scan_time.count()},
                        {"scan_entries", d.scan_entries},
                        {"runtime_ns", w.runtime.count()},
                        {"direct", d.direct}};
    if (p.workload_mode == WorkloadMode::kAuto) {
      j["synthetic"] = {{"size_bytes", w.size}, {"ramp_ns", w.ramp.count()}};
    }
    return j;
  }
  nlohmann::json j = {
      {"mode", "io"},         {"rw", rw_mode_name(w.rw)},        {"bs_bytes", w.block_size},  {"iodepth", w.iodepth},
      {"numjobs", w.numjobs}, {"runtime_ns", w.runtime.count()}, {"ramp_ns", w.ramp.count()}, {"size_bytes", w.size},
      {"direct", w.direct}};
  if (w.rw == RwMode::kRandRw) j["rwmixread"] = w.rwmixread;
  return j;
}

std::string selector_text(const RuleSelector& s) {
  if (s.empty()) return "every volume";
  std::vector<std::string> parts;
  if (!s.device_classes.empty()) parts.push_back("class in " + joined(class_names(s.device_classes)));
  if (!s.paths.empty()) parts.push_back("path under " + joined(s.paths));
  for (const auto& [k, v] : s.pod_labels) parts.push_back(fmt::format("pod label {}={}", k, v));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

nlohmann::json policy_to_json(const Policy& p, std::optional<int> gpus) {
  nlohmann::json rules = nlohmann::json::array();
  for (const Rule& r : p.rules) {
    nlohmann::json sel = {{"device_classes", class_names(r.selector.device_classes)},
                          {"paths", r.selector.paths},
                          {"pod_labels", r.selector.pod_labels}};
    nlohmann::json j = {{"name", r.name}, {"description", r.description}, {"selector", sel}};
    if (r.min_iops) j["min_iops"] = *r.min_iops;
    if (r.min_iops_per_gpu) j["min_iops_per_gpu"] = *r.min_iops_per_gpu;
    if (gpus && (r.min_iops || r.min_iops_per_gpu)) j["effective_min_iops"] = effective_min_iops(r, *gpus);
    if (r.max_p99_latency_ns) j["max_p99_latency_ns"] = *r.max_p99_latency_ns;
    if (r.min_samples_per_s) j["min_samples_per_s"] = *r.min_samples_per_s;
    if (r.samples_per_s_per_gpu) j["samples_per_s_per_gpu"] = *r.samples_per_s_per_gpu;
    if (gpus && (r.min_samples_per_s || r.samples_per_s_per_gpu)) {
      j["effective_min_samples_per_s"] = effective_min_samples_per_s(r, *gpus);
    }
    if (r.min_bandwidth_bytes_per_s) j["min_bandwidth_bytes_per_s"] = *r.min_bandwidth_bytes_per_s;
    if (r.min_bandwidth_per_gpu_bytes_per_s)
      j["min_bandwidth_per_gpu_bytes_per_s"] = *r.min_bandwidth_per_gpu_bytes_per_s;
    if (gpus && (r.min_bandwidth_bytes_per_s || r.min_bandwidth_per_gpu_bytes_per_s)) {
      j["effective_min_bandwidth_bytes_per_s"] = effective_min_bandwidth(r, *gpus);
    }
    if (r.demand) {
      const Demand& d = *r.demand;
      nlohmann::json dj = {{"workload", d.workload},
                           {"accelerator", d.accelerator},
                           {"samples_per_s", d.samples_per_s},
                           {"sample_bytes", d.sample_bytes ? nlohmann::json(*d.sample_bytes) : nlohmann::json(nullptr)},
                           {"min_au", d.min_au}};
      if (gpus) dj["samples_per_s_needed"] = samples_needed(d, demand_accelerators(*gpus));
      j["demand"] = std::move(dj);
    }
    if (r.checkpoint) {
      const CheckpointDemand& c = *r.checkpoint;
      nlohmann::json cj = {
          {"workload", c.workload},
          {"size_bytes", c.size_bytes},
          {"interval_ns", c.interval.count()},
          {"max_stall", c.max_stall},
          {"max_restore_ns", c.max_restore ? nlohmann::json(c.max_restore->count()) : nlohmann::json(nullptr)}};
      if (!c.workload.empty()) cj["named_rank_bytes"] = c.named_rank_bytes, cj["named_ranks"] = c.named_ranks;
      if (gpus) cj["pod_bytes"] = checkpoint_pod_bytes(c, *gpus), cj["ranks"] = checkpoint_ranks(*gpus);
      j["checkpoint"] = std::move(cj);
    }
    j["allowed_classes"] = class_names(r.allowed_classes);
    j["forbidden_classes"] = class_names(r.forbidden_classes);
    rules.push_back(std::move(j));
  }
  return {
      {"apiVersion", kPolicyApiVersion},
      {"kind", kPolicyKind},
      {"source", p.source},
      {"name", p.name},
      {"profile", p.profile},
      {"mode", policy_mode_name(p.mode)},
      {"on_error", on_error_name(p.on_error)},
      {"deadline_ns", p.deadline.count()},
      {"workload", workload_json(p)},
      {"early_stop", {{"enabled", p.early_stop}, {"tolerance", p.stop_tolerance}, {"confidence", p.stop_confidence}}},
      {"result_ttl_ns", p.result_ttl.count()},
      {"job_gather_window_ns", p.job_gather_window.count()},
      {"gpus", gpus ? nlohmann::json(*gpus) : nlohmann::json(nullptr)},
      {"rules", rules},
      {"node", node_settings_json(p.node)},
      {"webhook", {{"allow_opt_out", p.webhook.allow_opt_out}}}};
}

nlohmann::json node_settings_json(const NodeSettings& n) {
  nlohmann::json paths = nlohmann::json::array();
  for (const NodePath& p : n.paths) paths.push_back({{"path", p.path}, {"name", p.name}});
  nlohmann::json j = {{"paths", paths},
                      {"interval_ns", n.interval.count()},
                      {"jitter", n.jitter},
                      {"busy_util_percent", n.busy_util_percent},
                      {"busy_retry_ns", n.busy_retry.count()},
                      {"taint_effect", n.taint_effect},
                      {"fast_factor", n.fast_factor}};
  j["fast_min_iops"] = n.fast_min_iops ? nlohmann::json(*n.fast_min_iops) : nlohmann::json(nullptr);
  j["fast_min_iops_per_gpu"] =
      n.fast_min_iops_per_gpu ? nlohmann::json(*n.fast_min_iops_per_gpu) : nlohmann::json(nullptr);
  return j;
}

std::string render_policy_human(const Policy& p, std::optional<int> gpus) {
  const Workload& w = p.workload;
  std::string out;
  auto field = [&](std::string_view label, const std::string& value) { out += pad_right(label, 12) + value + "\n"; };
  field("policy", p.source + (p.name.empty() || p.source == "profile:" + p.name ? "" : " (" + p.name + ")") +
                      (p.profile.empty() || p.source == "profile:" + p.profile ? "" : ", from profile " + p.profile) +
                      ": valid");
  field("mode", fmt::format("{}, on_error {}, deadline {}", policy_mode_name(p.mode), on_error_name(p.on_error),
                            format_duration_compact(p.deadline.count())));
  std::string workload = fmt::format("{} bs={} iodepth={} numjobs={}", rw_mode_name(w.rw),
                                     format_size_compact(w.block_size), w.iodepth, w.numjobs);
  if (w.rw == RwMode::kRandRw) workload += fmt::format(" rwmixread={}", w.rwmixread);
  workload += fmt::format(" size={} ramp {}, runtime up to {}{}", format_size_compact(w.size),
                          format_duration_compact(w.ramp.count()), format_duration_compact(w.runtime.count()),
                          w.direct ? "" : ", buffered");
  if (p.workload_mode != WorkloadMode::kIo) {
    const DatasetWorkload& d = p.dataset;
    workload = fmt::format("dataset: {} workers, {} files sampled, scan up to {} or {} entries, runtime up to {}{}",
                           d.workers ? std::to_string(d.workers) : "70%-of-CPUs", d.sample,
                           format_duration_compact(d.scan_time.count()), d.scan_entries,
                           format_duration_compact(w.runtime.count()), d.direct ? ", O_DIRECT" : "");
    const bool shards =
        std::any_of(p.rules.begin(), p.rules.end(), [](const Rule& r) { return r.demand && r.demand->shard_bytes; });
    if (p.workload_mode == WorkloadMode::kAuto && shards) {
      workload = fmt::format(
          "auto: the {}; shards (.tar, .mds, .tfrecord, .parquet) are read whole, in records; where the path holds "
          "neither shards nor {} files, synthetic shards ({} sequential readers on a {} test file, ramp {})",
          workload, kMinDatasetFiles, d.workers ? std::to_string(d.workers) : "70%-of-CPUs",
          format_size_compact(w.size), format_duration_compact(w.ramp.count()));
    } else if (p.workload_mode == WorkloadMode::kAuto) {
      workload = fmt::format(
          "auto: the {}; where the path holds fewer than {} files, synthetic samples (random whole-sample reads, "
          "{} in flight, on a {} test file, ramp {})",
          workload, kMinDatasetFiles, d.workers ? std::to_string(d.workers) : "70%-of-CPUs",
          format_size_compact(w.size), format_duration_compact(w.ramp.count()));
    }
  }
  // Where every rule checks only a checkpoint or classes, the workload is not run.
  const bool checkpoint_only = !p.rules.empty() && std::all_of(p.rules.begin(), p.rules.end(), [](const Rule& r) {
    const std::vector<RuleThreshold> checks = rule_thresholds(r, std::nullopt);
    return std::all_of(checks.begin(), checks.end(), [](const RuleThreshold& t) {
      return t.check == CheckKind::kCheckpoint || t.check == CheckKind::kAllowedClasses ||
             t.check == CheckKind::kForbiddenClasses;
    });
  });
  if (checkpoint_only) {
    workload =
        "a checkpoint: one writer per GPU rank, each its own file, buffered, fsync, all at once, in rounds of "
        "growing size, then read back cold (the block-I/O workload is not run: no rule checks it)";
  }
  field("workload", workload);
  // Every mode stops early alike: a block probe on IOPS, the loader on samples/s.
  field("early stop", p.early_stop ? fmt::format("when the {} confidence interval is within ±{}",
                                                 format_percent(p.stop_confidence), format_percent(p.stop_tolerance))
                                   : "off: runs the whole runtime");
  std::string ttl = p.result_ttl.count()
                        ? format_duration_compact(p.result_ttl.count()) + " (a PVC's recorded result is reused)"
                        : "0 (always probe)";
  if (p.workload_mode == WorkloadMode::kDataset)
    ttl += " for a job's result only: a lone pod's dataset result is not shared";
  if (p.workload_mode == WorkloadMode::kAuto) ttl += "; for synthetic samples only: a dataset's result is not shared";
  field("result ttl", ttl);
  field("job gather", format_duration_compact(p.job_gather_window.count()) +
                          " (a job's pods wait this long for each other on their PVC)");
  const NodeSettings& n = p.node;
  std::string node_paths;
  for (const NodePath& np : n.paths)
    node_paths += (node_paths.empty() ? "" : ", ") + np.path + (np.name.empty() ? "" : " (" + np.name + ")");
  std::string fast =
      n.fast_min_iops || n.fast_min_iops_per_gpu
          ? fmt::format("tier fast from {} IOPS{}", format_thousands(double(n.fast_min_iops.value_or(0))),
                        n.fast_min_iops_per_gpu
                            ? fmt::format(" or {}/GPU", format_thousands(double(*n.fast_min_iops_per_gpu)))
                            : "")
          : fmt::format("tier fast at {:g}x every floor", n.fast_factor);
  field("node",
        fmt::format("{}; every {} ±{}; skip above {:g}% util, retry in {}; taint {}; {}",
                    node_paths.empty() ? "paths from --path" : node_paths, format_duration_compact(n.interval.count()),
                    format_percent(n.jitter), n.busy_util_percent, format_duration_compact(n.busy_retry.count()),
                    n.taint_effect.empty() ? "none" : n.taint_effect, fast));
  field("GPUs", gpus ? std::to_string(*gpus) : "not given (--gpus N resolves per-GPU floors)");

  std::vector<std::vector<std::string>> rows = {{"RULE", "APPLIES TO", "CHECK", "THRESHOLD"}};
  for (const Rule& r : p.rules) {
    const std::vector<RuleThreshold> checks = rule_thresholds(r, gpus);
    for (size_t i = 0; i < checks.size(); ++i) {
      rows.push_back({i == 0 ? r.name : "", i == 0 ? selector_text(r.selector) : "",
                      std::string(check_kind_name(checks[i].check)), checks[i].text});
    }
  }
  std::vector<size_t> widths(4, 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  out += "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += i + 1 < row.size() ? pad_right(row[i], widths[i] + 3) : row[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace iogate
