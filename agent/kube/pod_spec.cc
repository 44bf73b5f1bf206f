// Reading what a pod asks for (its GPUs, the volume behind a path) and what a node has (its GPUs).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "base/paths.h"
#include "base/quote.h"
#include "base/split_list.h"
#include "kube/operations.h"

namespace iogate {
namespace {

const char* const kGpuResources[] = {"nvidia.com/gpu", "amd.com/gpu"};

// No node has this many; a larger count is garbage (a fuzzed or hostile object), and capping each
// quantity keeps the sums below from overflowing.
constexpr int64_t kMaxGpuQuantity = 1'000'000;

// Extended resources are whole numbers: "2" or 2. Anything else counts as none.
int64_t whole_quantity(const nlohmann::json& q) {
  if (q.is_number_unsigned()) return std::min<uint64_t>(q.get<uint64_t>(), kMaxGpuQuantity);
  if (q.is_number_integer()) return std::clamp<int64_t>(q.get<int64_t>(), 0, kMaxGpuQuantity);
  if (!q.is_string()) return 0;
  const std::string& s = q.get_ref<const std::string&>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size() && s.front() != '-') return kMaxGpuQuantity;
  return ec == std::errc() && end == s.data() + s.size() && v > 0 ? std::min(v, kMaxGpuQuantity) : 0;
}

int64_t container_gpus(const nlohmann::json& container, const std::vector<std::string>& extra_resources) {
  const nlohmann::json& resources = object_at(container, "resources");
  const nlohmann::json& limits = object_at(resources, "limits");
  const nlohmann::json& requests = object_at(resources, "requests");
  int64_t total = 0;
  auto add = [&](const std::string& name) {
    if (auto it = limits.find(name); it != limits.end()) {
      total += whole_quantity(*it);
    } else if (auto r = requests.find(name); r != requests.end()) {
      total += whole_quantity(*r);
    }
  };
  for (const char* name : kGpuResources) add(name);
  for (const std::string& name : extra_resources) {
    if (std::find(std::begin(kGpuResources), std::end(kGpuResources), name) == std::end(kGpuResources)) add(name);
  }
  return total;
}

bool is_sidecar(const nlohmann::json& init_container) { return string_at(init_container, "restartPolicy") == "Always"; }

// "/data" holds "/data" and "/data/x", not "/database". Trailing slashes of mountPath ignored.
size_t mount_match_length(std::string mount, const std::string& path) {
  mount = strip_trailing_slashes(std::move(mount));
  if (mount.empty()) return 0;
  if (mount == "/") return 1;
  if (path.compare(0, mount.size(), mount) != 0) return 0;
  if (path.size() != mount.size() && path[mount.size()] != '/') return 0;
  return mount.size();
}

// Kubernetes' quantity: a non-negative decimal, then nothing, an SI suffix (n u m k M G T P E), a
// binary one (Ki ... Ei) or an exponent (e3, E-2).
bool is_quantity(std::string_view q) {
  size_t i = 0, digits = 0;
  while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i, ++digits;
  if (i < q.size() && q[i] == '.') {
    ++i;
    while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  std::string_view suffix = q.substr(i);
  for (std::string_view s : {"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}) {
    if (suffix == s) return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  size_t j = 1;
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  if (j == suffix.size()) return false;
  for (; j < suffix.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(suffix[j]))) return false;
  }
  return true;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_resource_list(std::string_view text, std::string_view what) {
  std::map<std::string, std::string> out;
  for (std::string_view entry : split_list(text)) {
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return usage_error(fmt::format("{}: expected NAME=QUANTITY[,NAME=QUANTITY...] like cpu=500m,memory=256Mi, got {}",
                                     what, quote_value(entry)));
    }
    std::string name(entry.substr(0, eq));
    std::string quantity(entry.substr(eq + 1));
    if (!is_quantity(quantity)) {
      return usage_error(
          fmt::format("{}: {}: {} is not a quantity (like 500m, 1, 256Mi or 1G)", what, name, quote_value(quantity)));
    }
    if (!out.emplace(name, quantity).second) return usage_error(fmt::format("{}: {} given twice", what, name));
  }
  return out;
}

int pod_gpu_count(const nlohmann::json& pod, const std::vector<std::string>& extra_resources) {
  const nlohmann::json& spec = object_at(pod, "spec");
  int64_t sidecars = 0;   // restartable init containers started so far (they keep running)
  int64_t init_peak = 0;  // the largest moment during the init phase
  for (const nlohmann::json& c : array_at(spec, "initContainers")) {
    int64_t gpus = container_gpus(c, extra_resources);
    if (is_sidecar(c)) {
      sidecars += gpus;
      init_peak = std::max(init_peak, sidecars);
    } else {
      init_peak = std::max(init_peak, sidecars + gpus);
    }
  }
  int64_t running = sidecars;
  for (const nlohmann::json& c : array_at(spec, "containers")) running += container_gpus(c, extra_resources);
  return static_cast<int>(std::min(std::max(running, init_peak), kMaxGpuQuantity));
}

std::optional<std::string> pvc_for_path(const nlohmann::json& pod, const std::string& path,
                                        const std::string& container_hint) {
  const nlohmann::json& spec = object_at(pod, "spec");
  std::vector<const nlohmann::json*> containers;
  for (const char* list : {"containers", "initContainers"}) {
    for (const nlohmann::json& c : array_at(spec, list)) {
      if (!container_hint.empty() && string_at(c, "name") == container_hint) containers = {&c};
    }
  }
  if (containers.empty()) {
    for (const char* list : {"containers", "initContainers"}) {
      for (const nlohmann::json& c : array_at(spec, list)) containers.push_back(&c);
    }
  }
  size_t best_length = 0;
  std::string best_volume;
  for (const nlohmann::json* c : containers) {
    for (const nlohmann::json& m : array_at(*c, "volumeMounts")) {
      size_t n = mount_match_length(string_at(m, "mountPath"), path);
      if (n > best_length) {
        best_length = n;
        best_volume = string_at(m, "name");
      }
    }
  }
  if (best_volume.empty()) return std::nullopt;
  for (const nlohmann::json& v : array_at(spec, "volumes")) {
    if (string_at(v, "name") != best_volume) continue;
    std::string claim = string_at(object_at(v, "persistentVolumeClaim"), "claimName");
    if (claim.empty()) return std::nullopt;
    return claim;
  }
  return std::nullopt;
}

NodeGpus node_gpu_count(const nlohmann::json& node) {
  const nlohmann::json& status = object_at(node, "status");
  for (const char* field : {"capacity", "allocatable"}) {
    const nlohmann::json& resources = object_at(status, field);
    int64_t total = 0;
    bool any = false;
    for (const char* name : kGpuResources) {
      if (auto it = resources.find(name); it != resources.end()) {
        any = true;
        total += whole_quantity(*it);
      }
    }
    if (any) return {static_cast<int>(total), std::string("status.") + field};
  }
  const nlohmann::json& labels = object_at(object_at(node, "metadata"), "labels");
  if (auto it = labels.find("nvidia.com/gpu.count"); it != labels.end()) {
    return {static_cast<int>(whole_quantity(*it)), "label nvidia.com/gpu.count"};
  }
  return {0, "none"};
}

}  // namespace iogate
