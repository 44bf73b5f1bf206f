// YAML (or JSON) → Policy, validating as it goes. Each reader takes the node and its field path
// so that every error can name exactly where the user has to look.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "base/quote.h"
#include "base/unique_fd.h"
#include "base/units.h"
#include "base/yaml_fields.h"
#include "policy/demand_label.h"
#include "policy/label_syntax.h"
#include "policy/policy.h"
#include "policy/policy_yaml.h"

namespace iogate {
namespace {

using Keys = FieldKeys;
using Fields = YamlMap;

// The policy document's maps, each named by its field path ("policy" for the document itself).
Result<Fields> read_map(const YAML::Node& n, const std::string& path, const Keys& known) {
  return read_yaml_map(n, path, known, "policy");
}

// "5 ms" as well as "5ms": base/units.h reads the unit right after the number. Errors quote the
// text as written.
std::string without_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

constexpr std::string_view kDurationWords = "a duration like 60s, 5ms or 1h";
constexpr std::string_view kSizeWords = "a size like 4k, 1m or 1g";

Result<std::chrono::nanoseconds> read_duration(const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) return yaml_expected(path, kDurationWords, n);
  auto d = parse_duration(without_spaces(n.Scalar()), path);
  return d.ok() ? d : parse_duration(n.Scalar(), path);
}

// A duration that must be more than 0 (an interval, a latency or time budget).
Result<std::chrono::nanoseconds> read_positive_duration(const YAML::Node& n, const std::string& path) {
  auto x = read_duration(n, path);
  if (!x.ok()) return x.error();
  if (x->count() <= 0)
    return usage_error(fmt::format("{}: must be more than 0, got {}", path, quote_value(n.Scalar())));
  return *x;
}

Result<DeviceClass> read_class(const YAML::Node& n, const std::string& path) {
  Keys names;
  for (DeviceClass c : all_device_classes()) names.push_back(device_class_name(c));
  if (!n.IsScalar()) return yaml_expected(path, "a device class name", n);
  if (auto c = device_class_from_name(n.Scalar())) return *c;
  std::string hint = closest_names(n.Scalar(), names);
  return usage_error(fmt::format("{}: unknown device class {}{} (classes: {})", path, quote_value(n.Scalar()),
                                 hint.empty() ? "" : fmt::format(", did you mean {}?", hint), join_names(names)));
}

Result<std::vector<DeviceClass>> read_classes(const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence() || n.size() == 0) return yaml_expected(path, "a non-empty list of device classes", n);
  std::vector<DeviceClass> out;
  for (size_t i = 0; i < n.size(); ++i) {
    auto c = read_class(n[i], field_element(path, i));
    if (!c.ok()) return c.error();
    if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
  }
  return out;
}

Result<std::vector<std::string>> read_paths(const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence() || n.size() == 0) return yaml_expected(path, "a non-empty list of absolute paths", n);
  std::vector<std::string> out;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node& p = n[i];
    if (!p.IsScalar() || p.Scalar().empty() || p.Scalar()[0] != '/') {
      return yaml_expected(field_element(path, i), "an absolute path like /data (globs allowed)", p);
    }
    out.push_back(p.Scalar());
  }
  return out;
}

// Labels, or with `annotations` annotations, checked as the API server checks an object's: the
// same syntax for keys, label values of at most 63 characters, annotations of 256 KiB in all.
Result<std::map<std::string, std::string>> read_labels(const YAML::Node& n, const std::string& path,
                                                       bool annotations = false) {
  const std::string_view what = annotations ? "annotation" : "label";
  if (!n.IsMap() || n.size() == 0) return yaml_expected(path, fmt::format("a non-empty map of {}: value", what), n);
  std::map<std::string, std::string> out;
  size_t bytes = 0;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar() || kv.first.Scalar().empty())
      return usage_error(fmt::format("{}: {} names must be strings", path, what));
    const std::string& key = kv.first.Scalar();
    std::string key_path = field_child(path, key);
    if (Status s = annotations ? check_annotation_key(key, key_path) : check_label_key(key, key_path); !s.ok())
      return s.error();
    // An empty label value is legal in Kubernetes ("key: ''"); a null is not a value.
    if (!kv.second.IsScalar())
      return yaml_expected(key_path, fmt::format("{} value (a string)", annotations ? "an annotation" : "a label"),
                           kv.second);
    const std::string& value = kv.second.Scalar();
    if (!annotations) {
      if (Status s = check_label_value(value, key_path); !s.ok()) return s.error();
    } else if ((bytes += key.size() + value.size()) > kAnnotationsMax) {
      return usage_error(
          fmt::format("{}: more than {} KiB in all, the most an object may have", path, kAnnotationsMax >> 10));
    }
    if (!out.emplace(key, value).second) return usage_error(key_path + ": given twice");
  }
  return out;
}

const Keys kTopKeys = {"apiVersion", "kind",       "metadata",   "profile",           "mode",  "on_error", "deadline",
                       "workload",   "early_stop", "result_ttl", "job_gather_window", "rules", "node",     "webhook"};
const Keys kWebhookKeys = {"allow_opt_out"};
const Keys kMetadataKeys = {"name", "namespace", "labels", "annotations"};
const Keys kDatasetWorkloadKeys = {"workers", "sample", "scan_time", "scan_entries"};
// A dataset run reads whole files for workload.runtime, with or without workload.direct; the other
// workload fields a policy sets are block-I/O keys only.
bool dataset_reads(WorkloadField f) { return f == WorkloadField::kRuntime || f == WorkloadField::kDirect; }
// The keys of each workload mode; a key of the other mode is an error naming it.
const Keys kIoWorkloadKeys = [] {
  Keys keys;
  for (const WorkloadFieldInfo& f : workload_fields()) {
    if (f.policy_key && !dataset_reads(f.field)) keys.push_back(workload_field_name(f.field));
  }
  return keys;
}();
const Keys kWorkloadKeys = [] {
  Keys keys = {"mode"};
  for (const WorkloadFieldInfo& f : workload_fields()) {
    if (f.policy_key) keys.push_back(workload_field_name(f.field));
  }
  keys.insert(keys.end(), kDatasetWorkloadKeys.begin(), kDatasetWorkloadKeys.end());
  return keys;
}();
const Keys kEarlyStopKeys = {"enabled", "tolerance", "confidence"};
const Keys kRuleKeys = {"name",
                        "description",
                        "selector",
                        "min_iops",
                        "min_iops_per_gpu",
                        "max_p99_latency",
                        "min_bandwidth",
                        "min_bandwidth_per_gpu",
                        "allowed_classes",
                        "forbidden_classes",
                        "min_samples_per_s",
                        "samples_per_s_per_gpu",
                        "demand"};
const Keys kDemandKeys = {"workload",   "accelerator", "samples_per_s", "sample_size",
                          "shard_size", "min_au",      "checkpoint"};
const Keys kCheckpointKeys = {"size", "workload", "interval", "max_stall", "max_restore"};
const Keys kSelectorKeys = {"device_classes", "paths", "pod_labels"};
const Keys kNodeKeys = {"paths",      "interval",     "jitter",        "busy_util",
                        "busy_retry", "taint_effect", "fast_min_iops", "fast_min_iops_per_gpu",
                        "fast_factor"};
const Keys kNodePathKeys = {"path", "name"};

// The block-I/O keys mode: auto takes for its synthetic sample reads; their block size and depth
// come from the demand and the loader's workers.
bool synthetic_sample_key(std::string_view key) { return key == "size" || key == "ramp"; }

// workload.mode: dataset or auto and their keys; the block-I/O keys are refused in dataset mode
// (auto takes the test file's size and ramp), and the dataset keys in io mode.
Status read_dataset_workload(const Fields& n, Policy& p) {
  const std::string path = "workload";
  if (const YAML::Node v = n["mode"]) {
    std::string m = v.IsScalar() ? v.Scalar() : "";
    if (m == "dataset") p.workload_mode = WorkloadMode::kDataset;
    else if (m == "auto") p.workload_mode = WorkloadMode::kAuto;
    else if (m == "io") p.workload_mode = WorkloadMode::kIo;
    else return yaml_expected(field_child(path, "mode"), "io, dataset or auto", v);
  }
  const bool dataset = p.workload_mode != WorkloadMode::kIo;
  for (std::string_view key : dataset ? kIoWorkloadKeys : kDatasetWorkloadKeys) {
    if (p.workload_mode == WorkloadMode::kAuto && synthetic_sample_key(key)) continue;
    if (n[key]) {
      std::string_view why = p.workload_mode == WorkloadMode::kDataset
                                 ? "not used by mode: dataset (it reads whole files)"
                             : dataset ? "not used by mode: auto (its synthetic reads are one sample each, as many "
                                         "in flight as workers)"
                                       : "only with mode: dataset or auto";
      return usage_error(fmt::format("{}: {}", field_child(path, std::string(key)), why));
    }
  }
  if (!dataset) return ok_status();
  DatasetWorkload& d = p.dataset;
  if (const YAML::Node v = n["workers"]) {
    auto x = read_yaml_integer(v, field_child(path, "workers"), 1, 1024);
    if (!x.ok()) return x.error();
    d.workers = static_cast<int>(*x);
  }
  if (const YAML::Node v = n["sample"]) {
    auto x = read_yaml_integer(v, field_child(path, "sample"), 1, 10'000'000);
    if (!x.ok()) return x.error();
    d.sample = static_cast<size_t>(*x);
  }
  if (const YAML::Node v = n["scan_entries"]) {
    auto x = read_yaml_integer(v, field_child(path, "scan_entries"), 1, int64_t{1} << 40);
    if (!x.ok()) return x.error();
    d.scan_entries = static_cast<uint64_t>(*x);
  }
  if (const YAML::Node v = n["scan_time"]) {
    auto x = read_duration(v, field_child(path, "scan_time"));
    if (!x.ok()) return x.error();
    if (x->count() <= 0) return usage_error(fmt::format("{}: must be more than 0", field_child(path, "scan_time")));
    d.scan_time = *x;
  }
  if (const YAML::Node v = n["direct"]) {
    auto x = read_yaml_bool(v, field_child(path, "direct"));
    if (!x.ok()) return x.error();
    d.direct = *x;
  }
  return ok_status();
}

// Rules check what the workload measures: samples/s (and a demand) only a dataset or auto run,
// IOPS and per-I/O latency only a block-I/O run. Auto's synthetic reads need a sample size.
Status check_rules_against_workload(const Policy& p) {
  const bool samples = p.workload_mode != WorkloadMode::kIo;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const Rule& r = p.rules[i];
    const std::string path = field_element("rules", i);
    if (samples) {
      for (auto [key, set] :
           {std::pair{"min_iops", bool(r.min_iops)}, std::pair{"min_iops_per_gpu", bool(r.min_iops_per_gpu)},
            std::pair{"max_p99_latency", bool(r.max_p99_latency_ns)}}) {
        if (set) {
          return usage_error(fmt::format(
              "{}: not measured by workload.mode: {}; use demand, min_samples_per_s or samples_per_s_per_gpu",
              field_child(path, key), workload_mode_name(p.workload_mode)));
        }
      }
      if (p.workload_mode == WorkloadMode::kAuto && r.demand && !r.demand->sample_bytes) {
        return usage_error(fmt::format(
            "{}: missing; workload.mode: auto reads synthetic samples of this size where the volume holds no dataset",
            field_child(field_child(path, "demand"), "sample_size")));
      }
    } else {
      for (auto [key, set] :
           {std::pair{"min_samples_per_s", bool(r.min_samples_per_s)},
            std::pair{"samples_per_s_per_gpu", bool(r.samples_per_s_per_gpu)}, std::pair{"demand", bool(r.demand)}}) {
        if (set) return usage_error(fmt::format("{}: needs workload.mode: auto or dataset", field_child(path, key)));
      }
    }
  }
  return ok_status();
}

// What a field of each syntax is, in "expected ..., got ..." errors.
std::string_view scalar_words(FieldSyntax syntax) {
  switch (syntax) {
    case FieldSyntax::kRwMode: return rw_mode_choices();
    case FieldSyntax::kInteger: return "a whole number";
    case FieldSyntax::kSize: return kSizeWords;
    case FieldSyntax::kDuration: return kDurationWords;
    case FieldSyntax::kBool: return "true or false";
    case FieldSyntax::kPath: return "a path";
  }
  return "a value";
}

// The block-I/O keys are the workload fields a policy may set (bench/workload.h), read with their
// YAML words: true/false for a switch, "5 ms" as well as "5ms".
Status read_workload(const Fields& n, Workload& w) {
  for (const WorkloadFieldInfo& f : workload_fields()) {
    if (!f.policy_key) continue;
    const YAML::Node v = n[workload_field_name(f.field)];
    if (!v) continue;
    const std::string key_path = policy_spelling(f.field);
    std::string text;
    if (f.syntax == FieldSyntax::kBool) {
      auto x = read_yaml_bool(v, key_path);
      if (!x.ok()) return x.error();
      text.push_back(*x ? '1' : '0');
    } else if (!v.IsScalar()) {
      return yaml_expected(key_path, scalar_words(f.syntax), v);
    } else {
      text = v.Scalar();
    }
    // Sizes and durations may have spaces ("5 ms") where that parses; errors quote the text as written.
    if (f.syntax == FieldSyntax::kSize || f.syntax == FieldSyntax::kDuration) {
      Workload spaced = w;
      if (set_workload_field(spaced, f.field, without_spaces(text), policy_spelling).ok()) {
        w = spaced;
        continue;
      }
    }
    if (Status s = set_workload_field(w, f.field, text, policy_spelling); !s.ok()) return s;
  }
  return ok_status();
}

Status validate_policy_workload(const Workload& w) { return validate_workload(w, policy_spelling); }

Status read_early_stop(const YAML::Node& node, Policy& p) {
  const std::string path = "early_stop";
  const auto fields = read_map(node, path, kEarlyStopKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  if (const YAML::Node v = n["enabled"]) {
    auto x = read_yaml_bool(v, field_child(path, "enabled"));
    if (!x.ok()) return x.error();
    p.early_stop = *x;
  }
  if (const YAML::Node v = n["tolerance"]) {
    std::string field = field_child(path, "tolerance");
    if (!v.IsScalar()) return yaml_expected(field, "a percentage like 3%", v);
    auto x = parse_fraction(v.Scalar(), field);
    if (!x.ok()) return x.error();
    if (*x <= 0 || *x > 0.5)
      return usage_error(fmt::format("{}: must be above 0% and at most 50%, got {}", field, quote_value(v.Scalar())));
    p.stop_tolerance = *x;
  }
  if (const YAML::Node v = n["confidence"]) {
    std::string field = field_child(path, "confidence");
    if (!v.IsScalar()) return yaml_expected(field, "a percentage like 95%", v);
    auto x = parse_fraction(v.Scalar(), field);
    if (!x.ok()) return x.error();
    if (*x < 0.5 || *x > 0.999)
      return usage_error(fmt::format("{}: must be within [50%, 99.9%], got {}", field, quote_value(v.Scalar())));
    p.stop_confidence = *x;
  }
  return ok_status();
}

Result<RuleSelector> read_selector(const YAML::Node& node, const std::string& path) {
  RuleSelector sel;
  const auto fields = read_map(node, path, kSelectorKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  if (const YAML::Node v = n["device_classes"]) {
    auto x = read_classes(v, field_child(path, "device_classes"));
    if (!x.ok()) return x.error();
    sel.device_classes = *x;
  }
  if (const YAML::Node v = n["paths"]) {
    auto x = read_paths(v, field_child(path, "paths"));
    if (!x.ok()) return x.error();
    sel.paths = *x;
  }
  if (const YAML::Node v = n["pod_labels"]) {
    auto x = read_labels(v, field_child(path, "pod_labels"));
    if (!x.ok()) return x.error();
    sel.pod_labels = *x;
  }
  return sel;
}

bool valid_rule_name(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// A positive decimal ("250", "21.7"); at most a billion, far beyond any accelerator.
Result<double> read_rate(const YAML::Node& n, const std::string& path) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && v > 0 && v <= 1e9) return v;
  }
  return yaml_expected(path, "a positive number of samples a second (at most 1e9)", n);
}

// rules[].demand: numbers, or an MLPerf Storage workload × accelerator whose numbers any given
// field overrides.
Result<Demand> read_demand(const YAML::Node& node, const std::string& path) {
  const auto fields = read_map(node, path, kDemandKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  Demand d;
  const YAML::Node workload = n["workload"], accelerator = n["accelerator"];
  if (workload || accelerator) {
    if (!workload)
      return usage_error(field_child(path, "workload") + ": missing; accelerator names one of its accelerators");
    if (!accelerator)
      return usage_error(field_child(path, "accelerator") + ": missing; the workload's speed depends on it (" +
                         named_workload_list() + ")");
    auto w = read_yaml_string(workload, field_child(path, "workload"));
    if (!w.ok()) return w.error();
    auto a = read_yaml_string(accelerator, field_child(path, "accelerator"));
    if (!a.ok()) return a.error();
    const NamedWorkload* named = find_named_workload(*w, *a);
    if (!named) {
      return usage_error(fmt::format("{}: no MLPerf Storage workload {} on {} (known: {})", path, quote_value(*w),
                                     quote_value(*a), named_workload_list()));
    }
    d = named_demand(*named);
  }
  if (const YAML::Node v = n["samples_per_s"]) {
    auto x = read_rate(v, field_child(path, "samples_per_s"));
    if (!x.ok()) return x.error();
    d.samples_per_s = *x;
  } else if (d.workload.empty()) {
    return usage_error(field_child(path, "samples_per_s") +
                       ": missing; what one accelerator consumes at full utilisation (or name a workload and "
                       "accelerator)");
  }
  if (const YAML::Node v = n["sample_size"]) {
    std::string field = field_child(path, "sample_size");
    if (!v.IsScalar()) return yaml_expected(field, kSizeWords, v);
    auto x = parse_size(without_spaces(v.Scalar()), field);
    if (!x.ok()) return x.error();
    if (*x == 0 || *x > (uint64_t{1} << 30))
      return usage_error(fmt::format("{}: must be above 0 and at most 1g, got {}", field, quote_value(v.Scalar())));
    d.sample_bytes = *x;
  }
  if (const YAML::Node v = n["shard_size"]) {
    std::string field = field_child(path, "shard_size");
    if (!v.IsScalar()) return yaml_expected(field, kSizeWords, v);
    auto x = parse_size(without_spaces(v.Scalar()), field);
    if (!x.ok()) return x.error();
    d.shard_bytes = *x;
  }
  if (d.shard_bytes) {
    const std::string field = field_child(path, "shard_size");
    if (!d.sample_bytes) {
      return usage_error(field_child(path, "sample_size") +
                         ": missing; a shard's records are samples of this size (shard_size is given)");
    }
    if (*d.shard_bytes < *d.sample_bytes) {
      return usage_error(fmt::format("{}: {} is smaller than one sample ({})", field,
                                     format_bytes(double(*d.shard_bytes)), format_bytes(double(*d.sample_bytes))));
    }
  }
  if (const YAML::Node v = n["min_au"]) {
    std::string field = field_child(path, "min_au");
    if (!v.IsScalar()) return yaml_expected(field, "a fraction like 0.90 or 90%", v);
    auto x = parse_fraction(v.Scalar(), field);
    if (!x.ok()) return x.error();
    if (*x <= 0 || *x > 1)
      return usage_error(fmt::format("{}: must be above 0 and at most 1, got {}", field, quote_value(v.Scalar())));
    d.min_au = *x;
  }
  return d;
}

// Whether rules[].demand states a checkpoint: a `checkpoint` map, or a workload naming one.
bool checkpoint_demand_node(const YAML::Node& n) {
  if (!n.IsMap()) return false;
  if (n["checkpoint"]) return true;
  const YAML::Node w = n["workload"];
  return w && w.IsScalar() && find_named_checkpoint(w.Scalar());
}

// rules[].demand for a checkpoint: `checkpoint: {size | workload, interval, max_stall,
// max_restore}`, or `workload: llama3-8b` beside it (or alone, every other field its default).
Result<CheckpointDemand> read_checkpoint_demand(const YAML::Node& node, const std::string& path) {
  const auto fields = read_map(node, path, kDemandKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  for (const char* key : {"accelerator", "samples_per_s", "sample_size", "shard_size", "min_au"}) {
    if (n[key]) {
      return usage_error(
          fmt::format("{}: not part of a checkpoint demand (a checkpoint is judged by its stall: "
                      "checkpoint.size or a named workload, interval, max_stall)",
                      field_child(path, key)));
    }
  }
  const std::string cpath = field_child(path, "checkpoint");
  std::optional<Fields> fields_of_checkpoint;
  if (const YAML::Node v = n["checkpoint"]) {
    auto x = read_map(v, cpath, kCheckpointKeys);
    if (!x.ok()) return x.error();
    fields_of_checkpoint = *x;
  }
  auto c = [&](const char* key) {
    return fields_of_checkpoint ? (*fields_of_checkpoint)[key] : YAML::Node(YAML::NodeType::Undefined);
  };
  CheckpointDemand d;
  const YAML::Node outer = n["workload"], inner = c("workload");
  if (outer && inner)
    return usage_error(field_child(cpath, "workload") + ": given twice (also " + field_child(path, "workload") + ")");
  if (const YAML::Node w = outer ? outer : inner) {
    const std::string field = field_child(outer ? path : cpath, "workload");
    auto name = read_yaml_string(w, field);
    if (!name.ok()) return name.error();
    const NamedCheckpoint* named = find_named_checkpoint(*name);
    if (!named) {
      return usage_error(fmt::format("{}: no MLPerf Storage checkpoint workload {} (known: {})", field,
                                     quote_value(*name), named_checkpoint_list()));
    }
    d = named_checkpoint_demand(*named);
  }
  if (const YAML::Node v = c("size")) {
    const std::string field = field_child(cpath, "size");
    if (!d.workload.empty()) return usage_error(field + ": the named workload sets the size; give one or the other");
    if (!v.IsScalar()) return yaml_expected(field, kSizeWords, v);
    auto x = parse_size(without_spaces(v.Scalar()), field);
    if (!x.ok()) return x.error();
    d.size_bytes = *x;
  } else if (d.workload.empty()) {
    return usage_error(field_child(cpath, "size") +
                       ": missing; the bytes the pod writes per checkpoint, all its GPUs together (or name a "
                       "workload: " +
                       named_checkpoint_list() + ")");
  }
  if (const YAML::Node v = c("interval")) {
    const std::string field = field_child(cpath, "interval");
    auto x = read_positive_duration(v, field);
    if (!x.ok()) return x.error();
    d.interval = *x;
  }
  if (const YAML::Node v = c("max_stall")) {
    const std::string field = field_child(cpath, "max_stall");
    if (!v.IsScalar()) return yaml_expected(field, "a fraction like 0.05 or 5%", v);
    auto x = parse_fraction(v.Scalar(), field);
    if (!x.ok()) return x.error();
    if (*x <= 0 || *x > 1)
      return usage_error(fmt::format("{}: must be above 0 and at most 1, got {}", field, quote_value(v.Scalar())));
    d.max_stall = *x;
  }
  if (const YAML::Node v = c("max_restore")) {
    const std::string field = field_child(cpath, "max_restore");
    auto x = read_positive_duration(v, field);
    if (!x.ok()) return x.error();
    d.max_restore = *x;
  }
  return d;
}

Result<Rule> read_rule(const YAML::Node& node, const std::string& path) {
  Rule r;
  const auto fields = read_map(node, path, kRuleKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  const YAML::Node name = n["name"];
  if (!name)
    return usage_error(field_child(path, "name") +
                       ": missing; every rule needs a name (it appears in verdicts and Events)");
  if (!name.IsScalar() || !valid_rule_name(name.Scalar())) {
    return yaml_expected(field_child(path, "name"), "a name of letters, digits, '-', '_' or '.' (at most 63)", name);
  }
  r.name = name.Scalar();
  if (const YAML::Node v = n["description"]) {
    auto x = read_yaml_string(v, field_child(path, "description"));
    if (!x.ok()) return x.error();
    r.description = *x;
  }
  if (const YAML::Node v = n["selector"]) {
    auto x = read_selector(v, field_child(path, "selector"));
    if (!x.ok()) return x.error();
    r.selector = *x;
  }
  for (auto [key, field] : {std::pair{"min_iops", &r.min_iops}, std::pair{"min_iops_per_gpu", &r.min_iops_per_gpu},
                            std::pair{"min_samples_per_s", &r.min_samples_per_s},
                            std::pair{"samples_per_s_per_gpu", &r.samples_per_s_per_gpu}}) {
    if (const YAML::Node v = n[key]) {
      auto x = read_yaml_positive(v, field_child(path, key));
      if (!x.ok()) return x.error();
      *field = *x;
    }
  }
  if (const YAML::Node v = n["max_p99_latency"]) {
    std::string field = field_child(path, "max_p99_latency");
    auto x = read_positive_duration(v, field);
    if (!x.ok()) return x.error();
    r.max_p99_latency_ns = static_cast<uint64_t>(x->count());
  }
  for (auto [key, field] : {std::pair{"min_bandwidth", &r.min_bandwidth_bytes_per_s},
                            std::pair{"min_bandwidth_per_gpu", &r.min_bandwidth_per_gpu_bytes_per_s}}) {
    if (const YAML::Node v = n[key]) {
      if (!v.IsScalar()) return yaml_expected(field_child(path, key), "a bandwidth like 500MB/s", v);
      auto x = parse_bandwidth(v.Scalar(), field_child(path, key));
      if (!x.ok()) return x.error();
      *field = *x;
    }
  }
  for (auto [key, field] :
       {std::pair{"allowed_classes", &r.allowed_classes}, std::pair{"forbidden_classes", &r.forbidden_classes}}) {
    if (const YAML::Node v = n[key]) {
      auto x = read_classes(v, field_child(path, key));
      if (!x.ok()) return x.error();
      *field = *x;
    }
  }
  if (const YAML::Node v = n["demand"]; v && checkpoint_demand_node(v)) {
    auto x = read_checkpoint_demand(v, field_child(path, "demand"));
    if (!x.ok()) return x.error();
    r.checkpoint = *x;
  } else if (v) {
    auto x = read_demand(v, field_child(path, "demand"));
    if (!x.ok()) return x.error();
    r.demand = *x;
    if (!demand_rule_name_fits_label(r.name)) {
      return usage_error(fmt::format(
          "{}: \"{}\": a rule with a demand names the node label {}<name>, whose name part allows at most {} "
          "characters ending in a letter or digit",
          field_child(path, "name"), r.name, kAcceleratorsLabelPrefix, kMaxDemandRuleName));
    }
  }
  for (DeviceClass c : r.forbidden_classes) {
    if (std::find(r.allowed_classes.begin(), r.allowed_classes.end(), c) != r.allowed_classes.end()) {
      return usage_error(fmt::format("{}: \"{}\" is also in allowed_classes", field_child(path, "forbidden_classes"),
                                     device_class_name(c)));
    }
  }
  if (!r.min_iops && !r.min_iops_per_gpu && !r.max_p99_latency_ns && !r.min_bandwidth_bytes_per_s &&
      !r.min_bandwidth_per_gpu_bytes_per_s && r.allowed_classes.empty() && r.forbidden_classes.empty() &&
      !r.min_samples_per_s && !r.samples_per_s_per_gpu && !r.demand && !r.checkpoint) {
    return usage_error(fmt::format(
        "{}: no check; give at least one of demand, min_iops, min_iops_per_gpu, max_p99_latency, min_bandwidth, "
        "min_bandwidth_per_gpu, allowed_classes, forbidden_classes, min_samples_per_s, samples_per_s_per_gpu",
        path));
  }
  return r;
}

Result<std::vector<Rule>> read_rules(const YAML::Node& n) {
  if (!n.IsSequence()) return yaml_expected("rules", "a list of rules", n);
  if (n.size() == 0) return usage_error("rules: empty; a policy needs at least one rule");
  std::vector<Rule> rules;
  std::map<std::string, size_t> index;  // name → rule: tens of thousands of rules fit in 1 MiB
  for (size_t i = 0; i < n.size(); ++i) {
    auto r = read_rule(n[i], field_element("rules", i));
    if (!r.ok()) return r.error();
    if (auto [it, added] = index.emplace(r->name, i); !added) {
      return usage_error(
          fmt::format("rules[{}].name: \"{}\" is already the name of rules[{}]", i, r->name, it->second));
    }
    rules.push_back(std::move(*r));
  }
  return rules;
}

Status read_metadata(const YAML::Node& node, Policy& p) {
  const auto fields = read_map(node, "metadata", kMetadataKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  if (const YAML::Node v = n["name"]) {
    auto x = read_yaml_string(v, "metadata.name");
    if (!x.ok()) return x.error();
    p.name = *x;
  }
  if (const YAML::Node v = n["namespace"]) {
    auto x = read_yaml_string(v, "metadata.namespace");
    if (!x.ok()) return x.error();
  }
  for (const char* key : {"labels", "annotations"}) {
    if (const YAML::Node v = n[key]) {
      auto x = read_labels(v, field_child("metadata", key), std::string_view(key) == "annotations");
      if (!x.ok()) return x.error();
    }
  }
  return ok_status();
}

// A DNS label (RFC 1123) short enough that "disk-class." + name stays within a label key's 63.
bool valid_node_path_name(const std::string& s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

Result<NodePath> read_node_path(const YAML::Node& n, const std::string& path) {
  NodePath out;
  if (n.IsScalar()) {
    out.path = n.Scalar();
  } else if (n.IsMap()) {
    const auto fields = read_map(n, path, kNodePathKeys);
    if (!fields.ok()) return fields.error();
    const YAML::Node p = (*fields)["path"];
    if (!p) return usage_error(field_child(path, "path") + ": missing");
    if (!p.IsScalar()) return yaml_expected(field_child(path, "path"), "an absolute path", p);
    out.path = p.Scalar();
    if (const YAML::Node v = (*fields)["name"]) {
      if (!v.IsScalar() || !valid_node_path_name(v.Scalar())) {
        return yaml_expected(field_child(path, "name"),
                             "a lower-case DNS label of at most 40 characters (it becomes part of a node label key)",
                             v);
      }
      out.name = v.Scalar();
    }
  } else {
    return yaml_expected(path, "an absolute path, or {path, name}", n);
  }
  if (out.path.empty() || out.path[0] != '/') {
    return usage_error(fmt::format("{}: expected an absolute path, got {}",
                                   n.IsMap() ? field_child(path, "path") : path, quote_value(out.path)));
  }
  return out;
}

Result<double> read_percentage(const YAML::Node& n, const std::string& path, double min, double max) {
  if (!n.IsScalar()) return yaml_expected(path, "a percentage like 10%", n);
  auto x = parse_fraction(n.Scalar(), path);
  if (!x.ok()) return x.error();
  if (*x < min || *x > max) {
    return usage_error(
        fmt::format("{}: must be within [{:g}%, {:g}%], got {}", path, min * 100, max * 100, quote_value(n.Scalar())));
  }
  return *x;
}

Status read_node_settings(const YAML::Node& node, NodeSettings& ns) {
  const std::string path = "node";
  const auto fields = read_map(node, path, kNodeKeys);
  if (!fields.ok()) return fields.error();
  const Fields& n = *fields;
  if (const YAML::Node v = n["paths"]) {
    std::string field = field_child(path, "paths");
    if (!v.IsSequence() || v.size() == 0) return yaml_expected(field, "a non-empty list of paths or {path, name}", v);
    ns.paths.clear();
    std::map<std::string, size_t> by_path, by_name;  // → index: a scan of the others would be quadratic
    for (size_t i = 0; i < v.size(); ++i) {
      auto p = read_node_path(v[i], field_element(field, i));
      if (!p.ok()) return p.error();
      if (auto [it, added] = by_path.emplace(p->path, i); !added) {
        return usage_error(fmt::format("{}: {} is already {}", field_element(field, i), quote_value(p->path),
                                       field_element(field, it->second)));
      }
      if (!p->name.empty()) {
        if (auto [it, added] = by_name.emplace(p->name, i); !added) {
          return usage_error(fmt::format("{}.name: \"{}\" is already the name of {}", field_element(field, i), p->name,
                                         field_element(field, it->second)));
        }
      }
      ns.paths.push_back(std::move(*p));
    }
  }
  for (auto [key, field, min] :
       {std::tuple{"interval", &ns.interval, std::chrono::nanoseconds(std::chrono::seconds(10))},
        std::tuple{"busy_retry", &ns.busy_retry, std::chrono::nanoseconds(std::chrono::seconds(1))}}) {
    if (const YAML::Node v = n[key]) {
      auto x = read_duration(v, field_child(path, key));
      if (!x.ok()) return x.error();
      if (*x < min || *x > std::chrono::hours(24 * 7)) {
        return usage_error(fmt::format("{}: must be within [{}, 168h], got {}", field_child(path, key),
                                       format_duration_compact(min.count()), quote_value(v.Scalar())));
      }
      *field = *x;
    }
  }
  if (const YAML::Node v = n["jitter"]) {
    auto x = read_percentage(v, field_child(path, "jitter"), 0, 0.5);
    if (!x.ok()) return x.error();
    ns.jitter = *x;
  }
  if (const YAML::Node v = n["busy_util"]) {
    auto x = read_percentage(v, field_child(path, "busy_util"), 0.01, 1.0);
    if (!x.ok()) return x.error();
    ns.busy_util_percent = *x * 100;
  }
  if (const YAML::Node v = n["taint_effect"]) {
    auto x = parse_taint_effect(v.IsScalar() ? v.Scalar() : "", field_child(path, "taint_effect"));
    if (!x.ok())
      return yaml_expected(field_child(path, "taint_effect"), "NoSchedule, PreferNoSchedule, NoExecute or none", v);
    ns.taint_effect = *x;
  }
  for (auto [key, field] :
       {std::pair{"fast_min_iops", &ns.fast_min_iops}, std::pair{"fast_min_iops_per_gpu", &ns.fast_min_iops_per_gpu}}) {
    if (const YAML::Node v = n[key]) {
      auto x = read_yaml_positive(v, field_child(path, key));
      if (!x.ok()) return x.error();
      *field = *x;
    }
  }
  if (const YAML::Node v = n["fast_factor"]) {
    std::string field = field_child(path, "fast_factor");
    double f = 0;
    if (!v.IsScalar()) return yaml_expected(field, "a number of at least 1, like 4", v);
    try {
      size_t used = 0;
      f = std::stod(v.Scalar(), &used);
      if (used != v.Scalar().size()) f = 0;
    } catch (const std::exception&) {
      f = 0;
    }
    if (!(f >= 1 && f <= 1000)) return yaml_expected(field, "a number within [1, 1000], like 4", v);
    ns.fast_factor = f;
  }
  return ok_status();
}

Status require_exact(const Fields& root, const char* key, std::string_view want) {
  const YAML::Node v = root[key];
  if (!v) return usage_error(fmt::format("{}: missing (expected \"{}\")", key, want));
  if (!v.IsScalar() || v.Scalar() != want) return yaml_expected(key, fmt::format("\"{}\"", want), v);
  return ok_status();
}

Result<Policy> read_policy(const YAML::Node& document, std::string_view source) {
  if (!document || document.IsNull()) {
    return usage_error(
        fmt::format("policy: empty; expected a map with apiVersion: {} and kind: {}", kPolicyApiVersion, kPolicyKind));
  }
  const auto fields = read_map(document, "", kTopKeys);
  if (!fields.ok()) return fields.error();
  const Fields& root = *fields;
  if (Status s = require_exact(root, "apiVersion", kPolicyApiVersion); !s.ok()) return s.error();
  if (Status s = require_exact(root, "kind", kPolicyKind); !s.ok()) return s.error();

  Policy p;
  if (const YAML::Node v = root["profile"]) {
    if (!v.IsScalar()) return yaml_expected("profile", "a built-in profile name", v);
    auto base = builtin_policy(v.Scalar());
    if (!base.ok()) return usage_error("profile: " + base.error().message);
    p = std::move(*base);
    p.profile = v.Scalar();
  }
  p.source = std::string(source);
  if (const YAML::Node v = root["metadata"]) {
    if (Status s = read_metadata(v, p); !s.ok()) return s.error();
  }
  if (const YAML::Node v = root["mode"]) {
    std::string m = v.IsScalar() ? v.Scalar() : "";
    if (m == "enforce") p.mode = PolicyMode::kEnforce;
    else if (m == "warn") p.mode = PolicyMode::kWarn;
    else if (m == "off") p.mode = PolicyMode::kOff;
    else return yaml_expected("mode", "enforce, warn or off", v);
  }
  if (const YAML::Node v = root["on_error"]) {
    std::string m = v.IsScalar() ? v.Scalar() : "";
    if (m == "fail-closed") p.on_error = OnError::kFailClosed;
    else if (m == "fail-open") p.on_error = OnError::kFailOpen;
    else return yaml_expected("on_error", "fail-closed or fail-open", v);
  }
  if (const YAML::Node v = root["deadline"]) {
    auto x = read_duration(v, "deadline");
    if (!x.ok()) return x.error();
    if (*x < std::chrono::seconds(1) || *x > std::chrono::hours(1)) {
      return usage_error(fmt::format("deadline: must be within [1s, 1h], got {}", quote_value(v.Scalar())));
    }
    p.deadline = *x;
  }
  if (const YAML::Node v = root["workload"]) {
    const auto workload = read_map(v, "workload", kWorkloadKeys);
    if (!workload.ok()) return workload.error();
    if (Status s = read_dataset_workload(*workload, p); !s.ok()) return s.error();
    if (Status s = read_workload(*workload, p.workload); !s.ok()) return s.error();
  }
  if (Status s = validate_policy_workload(p.workload); !s.ok()) return s.error();
  if (const YAML::Node v = root["early_stop"]) {
    if (Status s = read_early_stop(v, p); !s.ok()) return s.error();
  }
  if (const YAML::Node v = root["result_ttl"]) {
    auto x = read_duration(v, "result_ttl");
    if (!x.ok()) return x.error();
    if (*x > std::chrono::hours(24 * 30))
      return usage_error(fmt::format("result_ttl: at most 720h, got {}", quote_value(v.Scalar())));
    p.result_ttl = *x;
  }
  if (const YAML::Node v = root["job_gather_window"]) {
    auto x = read_duration(v, "job_gather_window");
    if (!x.ok()) return x.error();
    if (*x < std::chrono::seconds(1) || *x > std::chrono::minutes(10))
      return usage_error(fmt::format("job_gather_window: must be within [1s, 10m], got {}", quote_value(v.Scalar())));
    p.job_gather_window = *x;
  }
  if (const YAML::Node v = root["rules"]) {
    auto x = read_rules(v);
    if (!x.ok()) return x.error();
    p.rules = std::move(*x);
  } else if (p.profile.empty()) {
    return usage_error("rules: missing; a policy needs at least one rule (or a profile to take them from)");
  }
  if (const YAML::Node v = root["node"]) {
    if (Status s = read_node_settings(v, p.node); !s.ok()) return s.error();
  }
  if (const YAML::Node v = root["webhook"]) {
    const auto webhook = read_map(v, "webhook", kWebhookKeys);
    if (!webhook.ok()) return webhook.error();
    if (const YAML::Node o = (*webhook)["allow_opt_out"]) {
      auto x = read_yaml_bool(o, "webhook.allow_opt_out");
      if (!x.ok()) return x.error();
      p.webhook.allow_opt_out = *x;
    }
  }
  if (Status s = check_rules_against_workload(p); !s.ok()) return s.error();
  const bool scans = p.workload_mode != WorkloadMode::kIo;
  auto probe_time = (scans ? p.dataset.scan_time : p.workload.ramp) + p.workload.runtime;
  if (p.deadline < probe_time) {
    return usage_error(
        fmt::format("deadline: {} is shorter than {} + workload.runtime ({}); the probe could not finish",
                    format_duration_compact(p.deadline.count()), scans ? "workload.scan_time" : "workload.ramp",
                    format_duration_compact(probe_time.count())));
  }
  return p;
}

}  // namespace

Workload default_policy_workload() {
  Workload w;
  w.size = uint64_t{256} << 20;  // written quickly by an initContainer; the probe's own default is 1g
  return w;
}

std::string_view policy_mode_name(PolicyMode m) {
  switch (m) {
    case PolicyMode::kEnforce: return "enforce";
    case PolicyMode::kWarn: return "warn";
    case PolicyMode::kOff: return "off";
  }
  return "enforce";
}

std::string_view workload_mode_name(WorkloadMode m) {
  switch (m) {
    case WorkloadMode::kIo: return "io";
    case WorkloadMode::kDataset: return "dataset";
    case WorkloadMode::kAuto: return "auto";
  }
  return "io";
}

std::string_view on_error_name(OnError e) { return e == OnError::kFailOpen ? "fail-open" : "fail-closed"; }

Result<Policy> parse_policy(std::string_view text, std::string_view source) {
  if (text.size() > kPolicyMaxBytes) {
    return usage_error(fmt::format("policy: larger than {} MiB, the most a ConfigMap holds", kPolicyMaxBytes >> 20));
  }
  auto document = load_policy_yaml(text);
  if (!document.ok()) return document.error();
  try {
    return read_policy(*document, source);
  } catch (const YAML::Exception& e) {
    // The last line of defence: every reader checks a node's kind before it looks inside, so this
    // is a bug (the fuzz target fails on this message), but still a usage error, not an abort.
    return usage_error(fmt::format("policy: line {}, column {}: a YAML shape the reader does not expect ({})",
                                   e.mark.line + 1, e.mark.column + 1, log_safe(e.msg)));
  }
}

Result<Policy> load_policy_file(const std::string& path) {
  // O_NONBLOCK: a FIFO without a writer opens at once (and reads as empty) instead of hanging.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return usage_error(fmt::format("{}: cannot read the policy file: {}", path, std::strerror(errno)));
  struct stat st;
  // A directory opens and reads as nothing: it would be reported as an empty policy. In a pod it
  // is usually the ConfigMap volume's mount path given instead of its key's file.
  if (fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return usage_error(
        fmt::format("{}: is a directory, not a policy file (a ConfigMap volume: give its key's file, "
                    "e.g. {}/policy.yaml)",
                    path, path.ends_with('/') ? path.substr(0, path.size() - 1) : path));
  }
  // Blocking again, so a pipe whose writer is slow is waited for rather than read as empty.
  if (int flags = fcntl(fd.get(), F_GETFL); flags >= 0) fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  // One byte past the limit is enough to know the file is over it: /dev/zero is not read to the end.
  std::string text(kPolicyMaxBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return usage_error(fmt::format("{}: cannot read the policy file: {}", path, std::strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  auto p = parse_policy(text, path);
  if (!p.ok()) return usage_error(fmt::format("{}: {}", path, p.error().message));
  return p;
}

Result<std::string> parse_taint_effect(std::string_view text, std::string_view what) {
  if (text == "NoSchedule" || text == "PreferNoSchedule" || text == "NoExecute") return std::string(text);
  if (text == "none") return std::string();
  return usage_error(
      fmt::format("{}: expected NoSchedule, PreferNoSchedule, NoExecute or none, got {}", what, quote_value(text)));
}

}  // namespace iogate
