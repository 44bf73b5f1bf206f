#include "report/storage_report.h"

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {
namespace {

nlohmann::json node_to_json(const StackNode& n) {
  nlohmann::json children = nlohmann::json::array();
  for (const StackNode& c : n.children) children.push_back(node_to_json(c));
  return {{"name", n.name},
          {"kind", stack_node_kind_text(n)},
          {"class", device_class_name(n.device_class)},
          {"reason", n.reason},
          {"model", n.model},
          {"vendor", n.vendor},
          {"transport", n.transport},
          {"rotational", n.rotational},
          {"removable", n.removable},
          {"size_bytes", n.size_bytes},
          {"logical_block_size", n.logical_block_size},
          {"physical_block_size", n.physical_block_size},
          {"nr_requests", n.nr_requests},
          {"scheduler", n.scheduler},
          {"dm_name", n.dm_name},
          {"backing_file", n.backing_file},
          {"children", children}};
}

// Always present, as every key of the report is: empty values for a local or memory mount.
nlohmann::json network_to_json(const std::optional<NetworkMount>& network) {
  const NetworkMount n = network.value_or(NetworkMount{});
  const NetworkMountOptions& o = n.options;
  return {{"backend", network ? std::string(network_backend_name(n.backend)) : std::string()},
          {"servers", n.servers},
          {"export", n.export_path},
          {"volume", n.volume},
          {"options",
           {{"version", o.version},
            {"proto", o.proto},
            {"nconnect", o.nconnect},
            {"rsize_bytes", o.rsize_bytes},
            {"wsize_bytes", o.wsize_bytes},
            {"hard_soft", o.hard_soft},
            {"attr_cache", o.attr_cache},
            {"max_read_bytes", o.max_read_bytes},
            {"allow_other", o.allow_other}}}};
}

void render_node(const StackNode& n, const std::string& prefix, bool last, bool top, std::string& out) {
  std::string branch = top ? "" : (last ? "└─ " : "├─ ");
  std::string detail;
  if (!n.model.empty()) detail += fmt::format("  \"{}\"", n.model);
  if (!n.transport.empty()) detail += "  " + n.transport;
  if (n.size_bytes) detail += "  " + format_bytes(static_cast<double>(n.size_bytes));
  if (n.kind != StackNodeKind::kFile) detail += n.rotational ? "  rota" : "";
  if (!n.scheduler.empty() && n.children.empty()) detail += "  sched " + n.scheduler;
  if (!n.dm_name.empty()) detail += "  " + n.dm_name;
  out += fmt::format("  {}{}{}  {}  [{}]{}\n", prefix, branch, n.name, stack_node_kind_text(n),
                     device_class_name(n.device_class), detail);
  std::string child_prefix = top ? prefix : prefix + (last ? "   " : "│  ");
  for (size_t i = 0; i < n.children.size(); ++i) {
    render_node(n.children[i], child_prefix, i + 1 == n.children.size(), false, out);
  }
}

}  // namespace

nlohmann::json storage_stack_to_json(const StorageStack& s) {
  nlohmann::json stack = nlohmann::json::array();
  for (const StackNode& n : s.stack) stack.push_back(node_to_json(n));
  return {{"path", s.path},
          {"mount",
           {{"point", s.mount.mount_point},
            {"fstype", s.mount.fs_type},
            {"source", s.mount.source},
            {"options", s.mount.mount_options},
            {"super_options", s.mount.super_options},
            {"device", fmt::format("{}:{}", s.mount.major, s.mount.minor)},
            {"read_only", s.mount.read_only()}}},
          {"class", device_class_name(s.device_class)},
          {"reason", s.reason},
          {"slowest_leaf", s.slowest_leaf},
          {"network", network_to_json(s.network)},
          {"overlay_lowerdirs", s.overlay_lowerdirs},
          {"stack", stack}};
}

nlohmann::json detect_report_to_json(const StorageStack& s) {
  nlohmann::json j = storage_stack_to_json(s);
  j["schema"] = kDetectSchema;
  return j;
}

std::string render_storage_human(const StorageStack& s) {
  std::string out;
  IopsRange r = typical_randread_iops(s.device_class);
  out += fmt::format("{}\nclass    {}", s.path, device_class_name(s.device_class));
  if (r.high)
    out += fmt::format("  (typically {}–{} 4k random-read IOPS)", format_count(double(r.low)),
                       format_count(double(r.high)));
  out += fmt::format("\nreason   {}\n", s.reason);
  if (!s.mount.mount_point.empty()) {
    out += fmt::format("mount    {} on {}  {}  ({}{})\n", s.mount.fs_type, s.mount.mount_point, s.mount.source,
                       s.mount.mount_options, s.mount.read_only() ? ", read-only" : "");
  }
  if (s.network) out += fmt::format("network  {}\n", network_mount_summary(*s.network));
  if (!s.overlay_lowerdirs.empty()) {
    out += fmt::format("lower    {} overlay lowerdir{}\n", s.overlay_lowerdirs.size(),
                       s.overlay_lowerdirs.size() == 1 ? "" : "s");
  }
  if (!s.slowest_leaf.empty() && s.device_class == DeviceClass::kMixed)
    out += fmt::format("slowest  {}\n", s.slowest_leaf);
  if (!s.stack.empty()) {
    out += "stack\n";
    for (const StackNode& n : s.stack) render_node(n, "", true, true, out);
  }
  return out;
}

}  // namespace iogate
