#include "measure/measurement_json.h"

#include <cmath>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

namespace {

nlohmann::json line_json(const TransferLine& l) {
  return {{"fixed_seconds", l.fixed_s}, {"rank_bytes_per_s", l.bytes_per_s}};
}

nlohmann::json checkpoint_json(const CheckpointFigures& f) {
  nlohmann::json j = {{"ranks", f.ranks},
                      {"save", line_json(f.save)},
                      {"bytes_written", f.bytes_written},
                      {"bytes_read", f.bytes_read},
                      {"measured_ns", static_cast<uint64_t>(std::llround(f.measured_s * 1e9))},
                      {"read_only", f.read_only},
                      {"extrapolated", f.extrapolated},
                      {"note", f.note}};
  j["restore"] = f.restore.valid() ? line_json(f.restore) : nlohmann::json(nullptr);
  return j;
}

// Strict about types: a mistyped figure makes the whole record unusable.
std::optional<CheckpointFigures> checkpoint_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  CheckpointFigures f;
  auto line = [](const nlohmann::json& l, TransferLine& out) {
    if (l.is_null()) return true;
    if (!l.is_object() || !l.value("fixed_seconds", nlohmann::json()).is_number() ||
        !l.value("rank_bytes_per_s", nlohmann::json()).is_number())
      return false;
    out = {l["fixed_seconds"].get<double>(), l["rank_bytes_per_s"].get<double>()};
    return true;
  };
  try {
    f.ranks = j.at("ranks").get<int>();
    if (!line(j.at("save"), f.save) || !line(j.value("restore", nlohmann::json()), f.restore)) return std::nullopt;
    f.bytes_written = j.value("bytes_written", uint64_t{0});
    f.bytes_read = j.value("bytes_read", uint64_t{0});
    f.measured_s = double(j.value("measured_ns", uint64_t{0})) / 1e9;
    f.read_only = j.value("read_only", false);
    f.extrapolated = j.value("extrapolated", true);
    f.note = j.value("note", std::string());
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return f;
}

}  // namespace

nlohmann::json measurement_to_json(const Measurement& m) {
  nlohmann::json leaves = nlohmann::json::array();
  for (DeviceClass c : m.leaf_classes) leaves.push_back(std::string(device_class_name(c)));
  return {
      {"checkpoint", m.checkpoint ? checkpoint_json(*m.checkpoint) : nlohmann::json(nullptr)},
      {"iops", m.iops},
      {"p99_latency_ns", m.p99_latency_ns},
      {"bandwidth_bytes_per_s", m.bandwidth_bytes_per_s},
      {"device_class", std::string(device_class_name(m.device_class))},
      {"leaf_classes", leaves},
      {"path", m.path},
      {"fs_type", m.fs_type},
      {"rw", std::string(rw_mode_name(m.rw))},
      {"bs_bytes", m.block_size},
      {"measured_ns", static_cast<uint64_t>(std::llround(m.measured_s * 1e9))},
      {"page_cache", m.page_cache},
      {"direct", m.direct},
      {"read_only", m.read_only},
      {"read_existing_files", m.read_existing_files},
      {"read_block_device", m.read_block_device},
      {"wrote_test_file", m.wrote_test_file},
      {"files_bytes", m.files_bytes},
      {"readable_bytes", m.readable_bytes},
      {"stop_reason", stop_reason_name(m.stop_reason)},
      {"ci_half_width_relative", m.ci_half_width_relative.value_or(0.0)},
      {"ci_confidence", m.ci_confidence.value_or(0.0)},
      {"dataset", m.dataset},
      {"samples", m.samples},
      {"samples_per_s", m.samples_per_s},
      {"sample_bytes", m.sample_bytes},
      {"limit", feed_limit_name(m.limit)},
      {"limit_why", m.limit_why},
  };
}

std::optional<Measurement> measurement_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  Measurement m;
  bool ok = true;
  auto number = [&](const char* key, double& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_number()) ok = false;
    else out = it->get<double>();
  };
  auto boolean = [&](const char* key, bool& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_boolean()) ok = false;
    else out = it->get<bool>();
  };
  auto text = [&](const char* key, std::string& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_string()) ok = false;
    else out = it->get<std::string>();
  };
  auto count = [&](const char* key, uint64_t& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_number_unsigned()) ok = false;
    else out = it->get<uint64_t>();
  };
  if (!j.contains("iops")) return std::nullopt;
  number("iops", m.iops);
  number("p99_latency_ns", m.p99_latency_ns);
  number("bandwidth_bytes_per_s", m.bandwidth_bytes_per_s);
  std::string cls = "unknown", rw = "randread";
  text("device_class", cls);
  text("rw", rw);
  text("path", m.path);
  text("fs_type", m.fs_type);
  count("bs_bytes", m.block_size);
  double measured_ns = 0;
  number("measured_ns", measured_ns);
  m.measured_s = measured_ns / 1e9;
  boolean("page_cache", m.page_cache);
  boolean("direct", m.direct);
  boolean("read_only", m.read_only);
  boolean("read_existing_files", m.read_existing_files);
  boolean("read_block_device", m.read_block_device);
  boolean("wrote_test_file", m.wrote_test_file);
  boolean("dataset", m.dataset);
  boolean("samples", m.samples);
  number("samples_per_s", m.samples_per_s);
  number("sample_bytes", m.sample_bytes);
  count("files_bytes", m.files_bytes);
  count("readable_bytes", m.readable_bytes);
  std::string stop_reason;
  text("stop_reason", stop_reason);
  double ci = 0, confidence = 0;
  number("ci_half_width_relative", ci);
  number("ci_confidence", confidence);
  if (!ok) return std::nullopt;
  auto device_class = device_class_from_name(cls);
  auto mode = parse_rw_mode(rw);
  auto stopped = parse_stop_reason(stop_reason);
  if (!device_class || !mode.ok() || !stopped) return std::nullopt;
  m.stop_reason = *stopped;
  m.device_class = *device_class;
  m.rw = *mode;
  if (auto it = j.find("leaf_classes"); it != j.end()) {
    if (!it->is_array()) return std::nullopt;
    for (const auto& name : *it) {
      auto c = name.is_string() ? device_class_from_name(name.get<std::string>()) : std::nullopt;
      if (!c) return std::nullopt;
      m.leaf_classes.push_back(*c);
    }
  }
  if (auto it = j.find("checkpoint"); it != j.end() && !it->is_null()) {
    m.checkpoint = checkpoint_from_json(*it);
    if (!m.checkpoint) return std::nullopt;
  }
  if (ci > 0) m.ci_half_width_relative = ci;
  if (confidence > 0) m.ci_confidence = confidence;
  return m;
}

std::string workload_key(const Workload& w) {
  std::string key =
      fmt::format("{}/{}/qd{}x{}", rw_mode_name(w.rw), format_size_compact(w.block_size), w.iodepth, w.numjobs);
  if (w.rw == RwMode::kRandRw) key += fmt::format("/mix{}", w.rwmixread);
  if (!w.direct) key += "/buffered";
  return key;
}

}  // namespace iogate
