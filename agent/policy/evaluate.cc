#include "policy/evaluate.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/paths.h"
#include "base/quote.h"
#include "base/units.h"

namespace iogate {
namespace {

void collect_leaf_classes(const std::vector<StackNode>& nodes, std::vector<DeviceClass>& out) {
  for (const StackNode& n : nodes) {
    if (!n.children.empty()) {
      collect_leaf_classes(n.children, out);
    } else if (std::find(out.begin(), out.end(), n.device_class) == out.end()) {
      out.push_back(n.device_class);
    }
  }
}

bool contains(const std::vector<DeviceClass>& v, DeviceClass c) { return std::find(v.begin(), v.end(), c) != v.end(); }

bool is_glob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

// `path` is `prefix` or below it, by whole components: /data holds /data/x, not /database.
bool path_under(const std::string& path, const std::string& prefix) {
  std::string p = strip_trailing_slashes(prefix);
  if (p == "/") return !path.empty() && path[0] == '/';
  return path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '/');
}

// A glob matches the path or one of its ancestors, so /mnt/*/train selects /mnt/a/train/images.
bool glob_under(const std::string& path, const std::string& pattern) {
  std::string pat = strip_trailing_slashes(pattern);
  std::string p = path;
  while (!p.empty()) {
    if (fnmatch(pat.c_str(), p.c_str(), FNM_PATHNAME) == 0) return true;
    size_t slash = p.find_last_of('/');
    if (slash == std::string::npos || slash == 0) break;
    p.resize(slash);
  }
  return false;
}

std::string gpus_text(int gpus) { return fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"); }

struct FloorTerms {
  std::optional<uint64_t> fixed, per_gpu;
  CheckKind kind;                 // its name is the fixed floor's key: "min_iops"
  std::string (*amount)(double);  // "10,000", "500 MB/s"
  const char* unit;               // " IOPS", "" (the amount carries it)
  const char* per_gpu_suffix;     // "/GPU", " per GPU"
};

std::string floor_text(const FloorTerms& t, std::optional<int> gpus, double resolved) {
  std::string floor = t.amount(resolved) + t.unit;
  if (!t.per_gpu) return ">= " + floor;
  std::string per_gpu = t.amount(double(*t.per_gpu)) + t.per_gpu_suffix;
  if (!gpus) {
    if (!t.fixed) return fmt::format(">= {} x GPUs{}", per_gpu, t.unit);
    return fmt::format(">= max({}, {} x GPUs){}", t.amount(double(*t.fixed)), per_gpu, t.unit);
  }
  if (!t.fixed) return fmt::format(">= {} ({} x {})", floor, per_gpu, gpus_text(*gpus));
  return fmt::format(">= {} (max of {} {} and {} x {})", floor, check_kind_name(t.kind), t.amount(double(*t.fixed)),
                     per_gpu, gpus_text(*gpus));
}

std::string iops_text(double n) { return format_thousands(n) + " IOPS"; }
std::string bandwidth_text(double b) { return format_bandwidth_decimal(b); }

RuleCheck make_check(const Rule& r, CheckKind check) {
  RuleCheck c;
  c.rule = r.name;
  c.check = check;
  return c;
}

std::string measured_class_text(const Measurement& m) {
  if (m.device_class == DeviceClass::kMixed && !m.leaf_classes.empty()) {
    return fmt::format("mixed ({})", device_class_list(m.leaf_classes));
  }
  return std::string(device_class_name(m.device_class));
}

// A floor passes at or above it.
void judge_floor(RuleCheck& c, double floor, double measured, std::string measured_text) {
  c.threshold_value = floor;
  c.measured_value = measured;
  c.measured = std::move(measured_text);
  c.passed = measured >= floor;
}

void check_rule(const Rule& r, const Measurement& m, int gpus, std::vector<RuleCheck>& out) {
  for (RuleThreshold& t : rule_thresholds(r, gpus)) {
    RuleCheck c = make_check(r, t.check);
    c.threshold = std::move(t.text);
    switch (t.check) {
      case CheckKind::kMinIops: judge_floor(c, effective_min_iops(r, gpus), m.iops, iops_text(m.iops)); break;
      case CheckKind::kMaxP99Latency:
        c.threshold_value = double(*r.max_p99_latency_ns);
        c.measured_value = m.p99_latency_ns;
        c.measured = format_duration_ns(m.p99_latency_ns);
        c.passed = m.p99_latency_ns <= c.threshold_value;
        break;
      case CheckKind::kMinBandwidth:
        judge_floor(c, effective_min_bandwidth(r, gpus), m.bandwidth_bytes_per_s,
                    bandwidth_text(m.bandwidth_bytes_per_s));
        break;
      case CheckKind::kMinSamplesPerS:
        judge_floor(c, effective_min_samples_per_s(r, gpus), m.samples_per_s,
                    format_thousands(m.samples_per_s) + " samples/s");
        c.passed = c.passed && m.samples;  // a 4 KiB block-I/O run measures no samples
        break;
      case CheckKind::kDemand: {
        const double delivered = demand_delivered_samples_per_s(*r.demand, m);
        DemandOutcome o = judge_demand(*r.demand, demand_accelerators(gpus), delivered);
        o.limit = m.limit;
        c.measured_value = o.predicted_au;
        c.threshold_value = o.min_au;
        // Where the volume is what holds the AU down, say by what.
        std::string limit = o.predicted_au < 1 && m.limit != FeedLimit::kUnknown
                                ? fmt::format("; limit {}", feed_limit_name(m.limit))
                                : "";
        c.measured =
            fmt::format("AU {:.2f} ({} samples/s; sustains {} {}{})", o.predicted_au, format_thousands(delivered),
                        o.accelerators_sustained, o.accelerators_sustained == 1 ? "GPU" : "GPUs", limit);
        c.passed = o.passed && m.samples;
        c.demand = o;
        c.limit_why = m.limit_why;
        break;
      }
      case CheckKind::kCheckpoint: {
        c.threshold_value = r.checkpoint->max_stall;
        if (!m.checkpoint || !m.checkpoint->save.valid()) {
          c.measured =
              m.checkpoint && !m.checkpoint->note.empty() ? "not measured: " + m.checkpoint->note : "not measured";
          c.passed = false;
          break;
        }
        CheckpointOutcome o = judge_checkpoint(*r.checkpoint, gpus, *m.checkpoint);
        c.measured_value = o.stall_fraction;
        c.measured = checkpoint_outcome_text(o);
        c.passed = o.passed;
        c.checkpoint = o;
        break;
      }
      case CheckKind::kAllowedClasses: {
        // A mixed volume passes when every leaf is allowed: its class alone says nothing.
        c.measured = measured_class_text(m);
        bool leaves_allowed = m.device_class == DeviceClass::kMixed && !m.leaf_classes.empty() &&
                              std::all_of(m.leaf_classes.begin(), m.leaf_classes.end(),
                                          [&](DeviceClass l) { return contains(r.allowed_classes, l); });
        c.passed = contains(r.allowed_classes, m.device_class) || leaves_allowed;
        break;
      }
      case CheckKind::kForbiddenClasses: {
        // Any forbidden leaf fails: an HDD in an LVM volume with an NVMe disk still sets its pace.
        c.measured = measured_class_text(m);
        bool leaf_forbidden = std::any_of(m.leaf_classes.begin(), m.leaf_classes.end(),
                                          [&](DeviceClass l) { return contains(r.forbidden_classes, l); });
        c.passed = !contains(r.forbidden_classes, m.device_class) && !leaf_forbidden;
        break;
      }
    }
    out.push_back(std::move(c));
  }
}

}  // namespace

double demand_delivered_samples_per_s(const Demand& d, const Measurement& m) {
  if (d.shard_bytes && d.sample_bytes && m.dataset) return m.bandwidth_bytes_per_s / double(*d.sample_bytes);
  return m.samples_per_s;
}

std::vector<DeviceClass> leaf_classes(const std::vector<StackNode>& stack) {
  std::vector<DeviceClass> out;
  collect_leaf_classes(stack, out);
  return out;
}

Measurement stack_measurement(const StorageStack& s, const std::string& path) {
  Measurement m;
  m.device_class = s.device_class;
  collect_leaf_classes(s.stack, m.leaf_classes);
  m.path = path;
  m.fs_type = s.mount.fs_type;
  return m;
}

std::string min_samples_text(const Rule& r, std::optional<int> gpus) {
  FloorTerms t{
      r.min_samples_per_s, r.samples_per_s_per_gpu, CheckKind::kMinSamplesPerS, format_thousands, " samples/s", "/GPU"};
  return floor_text(t, gpus, effective_min_samples_per_s(r, gpus.value_or(0)));
}

double effective_min_samples_per_s(const Rule& r, int gpus) {
  double fixed = r.min_samples_per_s ? double(*r.min_samples_per_s) : 0;
  double scaled = r.samples_per_s_per_gpu ? double(*r.samples_per_s_per_gpu) * std::max(gpus, 0) : 0;
  return std::max(fixed, scaled);
}

std::string min_iops_text(const Rule& r, std::optional<int> gpus) {
  FloorTerms t{r.min_iops, r.min_iops_per_gpu, CheckKind::kMinIops, format_thousands, " IOPS", "/GPU"};
  return floor_text(t, gpus, effective_min_iops(r, gpus.value_or(0)));
}

std::string min_bandwidth_text(const Rule& r, std::optional<int> gpus) {
  FloorTerms t{r.min_bandwidth_bytes_per_s,
               r.min_bandwidth_per_gpu_bytes_per_s,
               CheckKind::kMinBandwidth,
               format_bandwidth_decimal,
               "",
               " per GPU"};
  return floor_text(t, gpus, effective_min_bandwidth(r, gpus.value_or(0)));
}

std::string demand_text(const Demand& d, std::optional<int> gpus) {
  std::string per_gpu = format_thousands(d.samples_per_s) + "/GPU";
  if (!gpus) return fmt::format("AU >= {:.2f} at {} samples/s per GPU", d.min_au, format_thousands(d.samples_per_s));
  int n = demand_accelerators(*gpus);
  return fmt::format("AU >= {:.2f} at {} samples/s ({} x {})", d.min_au, format_thousands(samples_needed(d, n)),
                     per_gpu, gpus_text(n));
}

std::vector<RuleThreshold> rule_thresholds(const Rule& r, std::optional<int> gpus) {
  std::vector<RuleThreshold> out;
  if (r.demand) out.push_back({CheckKind::kDemand, demand_text(*r.demand, gpus)});
  if (r.checkpoint) out.push_back({CheckKind::kCheckpoint, checkpoint_demand_text(*r.checkpoint, gpus)});
  if (r.min_iops || r.min_iops_per_gpu) out.push_back({CheckKind::kMinIops, min_iops_text(r, gpus)});
  if (r.max_p99_latency_ns) {
    out.push_back({CheckKind::kMaxP99Latency, "<= " + format_duration_ns(double(*r.max_p99_latency_ns))});
  }
  if (r.min_bandwidth_bytes_per_s || r.min_bandwidth_per_gpu_bytes_per_s) {
    out.push_back({CheckKind::kMinBandwidth, min_bandwidth_text(r, gpus)});
  }
  if (r.min_samples_per_s || r.samples_per_s_per_gpu) {
    out.push_back({CheckKind::kMinSamplesPerS, min_samples_text(r, gpus)});
  }
  if (!r.allowed_classes.empty())
    out.push_back({CheckKind::kAllowedClasses, "one of " + device_class_list(r.allowed_classes)});
  if (!r.forbidden_classes.empty()) {
    out.push_back({CheckKind::kForbiddenClasses, "none of " + device_class_list(r.forbidden_classes)});
  }
  return out;
}

double effective_min_iops(const Rule& r, int gpus) {
  double fixed = r.min_iops ? double(*r.min_iops) : 0;
  double scaled = r.min_iops_per_gpu ? double(*r.min_iops_per_gpu) * std::max(gpus, 0) : 0;
  return std::max(fixed, scaled);
}

double effective_min_bandwidth(const Rule& r, int gpus) {
  double fixed = r.min_bandwidth_bytes_per_s ? double(*r.min_bandwidth_bytes_per_s) : 0;
  double scaled =
      r.min_bandwidth_per_gpu_bytes_per_s ? double(*r.min_bandwidth_per_gpu_bytes_per_s) * std::max(gpus, 0) : 0;
  return std::max(fixed, scaled);
}

std::optional<std::string> selector_mismatch(const RuleSelector& s, DeviceClass device_class, const std::string& path,
                                             const std::map<std::string, std::string>& pod_labels) {
  if (!s.device_classes.empty() && !contains(s.device_classes, device_class)) {
    return fmt::format("device class {} is not one of {}", device_class_name(device_class),
                       device_class_list(s.device_classes));
  }
  if (!s.paths.empty()) {
    std::string p = strip_trailing_slashes(path);
    bool any = std::any_of(s.paths.begin(), s.paths.end(), [&](const std::string& sel) {
      return is_glob(sel) ? glob_under(p, sel) : path_under(p, sel);
    });
    if (!any) {
      std::string list;
      for (const std::string& sel : s.paths) list += (list.empty() ? "" : ", ") + sel;
      return fmt::format("path {} is not under {}", p.empty() ? "(none)" : p, list);
    }
  }
  for (const auto& [key, want] : s.pod_labels) {
    auto it = pod_labels.find(key);
    if (it == pod_labels.end()) return fmt::format("the pod has no label {} (wants {})", key, quote_value(want));
    if (it->second != want)
      return fmt::format("pod label {} is {}, not {}", key, quote_value(it->second), quote_value(want));
  }
  return std::nullopt;
}

RuleIopsFloor rule_iops_floor(const Policy& p, const Rule& r, int gpus) {
  RuleIopsFloor f;
  if (p.workload_mode != WorkloadMode::kIo) return f;
  f.iops = effective_min_iops(r, gpus);
  double bandwidth = effective_min_bandwidth(r, gpus);
  if (bandwidth > 0 && p.workload.block_size > 0) {
    double converted = bandwidth / double(p.workload.block_size);
    if (converted > f.iops) f = {converted, true};
  }
  return f;
}

std::optional<double> iops_floor(const Policy& p, const EvaluationContext& ctx, DeviceClass device_class) {
  std::optional<double> floor;
  for (const Rule& r : p.rules) {
    if (selector_mismatch(r.selector, device_class, ctx.path, ctx.pod_labels)) continue;
    double iops = rule_iops_floor(p, r, ctx.gpus).iops;
    if (iops > 0) floor = std::max(floor.value_or(0), iops);
  }
  return floor;
}

std::string rule_check_text(const RuleCheck& c) {
  return fmt::format("rule {} {}: {} against {}", c.rule, check_kind_name(c.check), c.measured, c.threshold);
}

std::string_view check_kind_name(CheckKind k) {
  switch (k) {
    case CheckKind::kDemand: return "demand";
    case CheckKind::kCheckpoint: return "checkpoint";
    case CheckKind::kMinIops: return "min_iops";
    case CheckKind::kMaxP99Latency: return "max_p99_latency";
    case CheckKind::kMinBandwidth: return "min_bandwidth";
    case CheckKind::kMinSamplesPerS: return "min_samples_per_s";
    case CheckKind::kAllowedClasses: return "allowed_classes";
    case CheckKind::kForbiddenClasses: return "forbidden_classes";
  }
  return "?";
}

std::string_view verdict_outcome_name(VerdictOutcome o) {
  switch (o) {
    case VerdictOutcome::kPass: return "pass";
    case VerdictOutcome::kFail: return "fail";
    case VerdictOutcome::kWarn: return "warn";
    case VerdictOutcome::kOff: return "off";
  }
  return "fail";
}

const RuleCheck* Verdict::first_failure() const {
  for (const RuleCheck& c : checks) {
    if (!c.passed) return &c;
  }
  return nullptr;
}

Verdict evaluate_policy(const Policy& p, const Measurement& m, const EvaluationContext& ctx) {
  Verdict v;
  v.mode = p.mode;
  v.gpus = ctx.gpus;
  v.policy = p.source;
  const std::string& path = ctx.path.empty() ? m.path : ctx.path;
  size_t applied = 0;
  for (const Rule& r : p.rules) {
    if (auto why = selector_mismatch(r.selector, m.device_class, path, ctx.pod_labels)) {
      v.rules_not_applicable.push_back(fmt::format("{}: {}", r.name, *why));
      continue;
    }
    ++applied;
    check_rule(r, m, ctx.gpus, v.checks);
    if (r.min_iops_per_gpu && !r.min_iops && ctx.gpus <= 0) {
      v.caveats.push_back(fmt::format(
          "Rule {} sets only min_iops_per_gpu ({}/GPU) and the pod requests no GPUs, so its IOPS floor is 0.", r.name,
          format_thousands(double(*r.min_iops_per_gpu))));
    }
    if (r.samples_per_s_per_gpu && !r.min_samples_per_s && ctx.gpus <= 0) {
      v.caveats.push_back(fmt::format(
          "Rule {} sets only samples_per_s_per_gpu ({}/GPU) and the pod requests no GPUs, so its samples/s floor is 0.",
          r.name, format_thousands(double(*r.samples_per_s_per_gpu))));
    }
    if (r.demand && ctx.gpus <= 0) {
      v.caveats.push_back(fmt::format(
          "Rule {} states what each accelerator consumes and the pod requests no GPUs, so it was judged for one.",
          r.name));
    }
    if (r.min_bandwidth_per_gpu_bytes_per_s && !r.min_bandwidth_bytes_per_s && ctx.gpus <= 0) {
      v.caveats.push_back(fmt::format(
          "Rule {} sets only min_bandwidth_per_gpu ({}/GPU) and the pod requests no GPUs, so its bandwidth floor is 0.",
          r.name, format_bandwidth_decimal(double(*r.min_bandwidth_per_gpu_bytes_per_s))));
    }
  }
  if (applied == 0) {
    v.caveats.push_back(
        fmt::format("No rule applied to this volume ({} of {} rules' selectors did not match), so the pass says "
                    "nothing about its speed.",
                    v.rules_not_applicable.size(), p.rules.size()));
  }
  // A floor within the measurement's own uncertainty: the verdict could flip on a rerun.
  if (m.ci_half_width_relative && m.iops > 0) {
    double margin = *m.ci_half_width_relative * m.iops;
    for (const RuleCheck& c : v.checks) {
      if (c.check == CheckKind::kMinIops && c.threshold_value > 0 && std::fabs(m.iops - c.threshold_value) <= margin) {
        v.caveats.push_back(
            fmt::format("The measured {} is within the {} confidence interval (±{}) of rule {}'s floor of {}, so a "
                        "rerun may land on "
                        "the other side.",
                        iops_text(m.iops), format_percent(m.ci_confidence.value_or(p.stop_confidence)),
                        format_percent(*m.ci_half_width_relative), c.rule, iops_text(c.threshold_value)));
      }
    }
  }
  for (std::string& c : measurement_caveats(p, m)) v.caveats.push_back(std::move(c));

  bool failed = v.first_failure() != nullptr;
  switch (p.mode) {
    case PolicyMode::kEnforce: v.outcome = failed ? VerdictOutcome::kFail : VerdictOutcome::kPass; break;
    case PolicyMode::kWarn: v.outcome = failed ? VerdictOutcome::kWarn : VerdictOutcome::kPass; break;
    case PolicyMode::kOff: v.outcome = VerdictOutcome::kOff; break;
  }
  return v;
}

}  // namespace iogate
