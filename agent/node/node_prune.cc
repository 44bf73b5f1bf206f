#include "node/node_prune.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/json_fields.h"
#include "node/node_records.h"

namespace iogate {
namespace {

// The condition types the node agent owns (node_records.h); a Node's others are the kubelet's
// and other controllers'.
const char* const kOwnedConditions[] = {kBelowPolicyCondition};

bool ours(const std::string& key) { return key.rfind(kNodeLabelPrefix, 0) == 0; }

std::vector<std::string> iogate_keys_of(const nlohmann::json& map) {
  std::vector<std::string> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (ours(it.key())) out.push_back(it.key());
  }
  return out;
}

// A list's continue token in a query: RFC 3986 unreserved characters as they are, the rest %XX.
std::string query_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// Every item of a collection, page by page (500 at a time, so a large cluster's list is not one
// huge answer).
ApiResult<std::vector<nlohmann::json>> list_all(ApiClient& api, const std::string& collection) {
  std::vector<nlohmann::json> items;
  std::string token;
  do {
    std::string path = collection + "?limit=500";
    if (!token.empty()) path += "&continue=" + query_escape(token);
    auto page = api.get(path);
    if (!page.ok()) return page.error();
    for (const nlohmann::json& item : array_at(*page, "items")) items.push_back(item);
    token = string_at(object_at(*page, "metadata"), "continue");
  } while (!token.empty());
  return items;
}

std::string plural(int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

nlohmann::json nulls(const std::vector<std::string>& keys) {
  nlohmann::json m = nlohmann::json::object();
  for (const std::string& k : keys) m[k] = nullptr;
  return m;
}

std::string resource_version(const nlohmann::json& object) {
  return string_at(object_at(object, "metadata"), "resourceVersion");
}

// One write of a pruning step, computed from `current` and carrying its resourceVersion; nullopt
// when there is nothing left to do. The step's counts go to `done` once the write succeeds.
struct Step {
  std::string path;
  PatchType type = PatchType::kMerge;
  nlohmann::json body;
  PrunedObject counts;
};

std::optional<Step> next_node_step(const std::string& name, const nlohmann::json& current) {
  IogateKeys k = node_iogate_keys(current);
  Step s;
  nlohmann::json meta = {{"resourceVersion", resource_version(current)}};
  if (k.metadata_or_spec()) {
    s.path = "/api/v1/nodes/" + name;
    if (!k.labels.empty()) meta["labels"] = nulls(k.labels);
    if (!k.annotations.empty()) meta["annotations"] = nulls(k.annotations);
    s.body = {{"metadata", meta}};
    // spec.taints is atomic: the list is replaced whole, so it is the read one less ours.
    if (k.taints > 0) s.body["spec"] = {{"taints", k.kept_taints.empty() ? nlohmann::json(nullptr) : k.kept_taints}};
    s.counts.labels = static_cast<int>(k.labels.size());
    s.counts.annotations = static_cast<int>(k.annotations.size());
    s.counts.taints = k.taints;
    return s;
  }
  if (!k.conditions.empty()) {
    s.path = "/api/v1/nodes/" + name + "/status";
    s.type = PatchType::kStrategicMerge;
    nlohmann::json deletes = nlohmann::json::array();
    for (const std::string& type : k.conditions) deletes.push_back({{"type", type}, {"$patch", "delete"}});
    s.body = {{"metadata", meta}, {"status", {{"conditions", deletes}}}};
    s.counts.conditions = static_cast<int>(k.conditions.size());
    return s;
  }
  return std::nullopt;
}

std::optional<Step> next_pvc_step(const std::string& ns, const std::string& name, const nlohmann::json& current) {
  std::vector<std::string> keys = pvc_iogate_annotations(current);
  if (keys.empty()) return std::nullopt;
  Step s;
  s.path = "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name;
  s.body = {{"metadata", {{"resourceVersion", resource_version(current)}, {"annotations", nulls(keys)}}}};
  s.counts.annotations = static_cast<int>(keys.size());
  return s;
}

void add_counts(PrunedObject& to, const PrunedObject& from) {
  to.labels += from.labels;
  to.annotations += from.annotations;
  to.taints += from.taints;
  to.conditions += from.conditions;
}

// Steps until nothing is left, starting from `current` (the object as the list gave it). A 409
// means the object moved on since it was read: read it again and compute the step anew.
ApiStatus prune_object(ApiClient& api, const std::string& path, nlohmann::json current,
                       const std::function<std::optional<Step>(const nlohmann::json&)>& next, PrunedObject& done) {
  for (int conflicts = 0, writes = 0;;) {
    std::optional<Step> s = next(current);
    if (!s) return Ok{};
    // Two writes suffice (metadata and spec, then status): more means something puts keys back.
    if (++writes > 2 + kPruneConflictRetries) {
      return ApiError{"PATCH " + path, 0, "Unpruned", "iogate.io/ keys are back after every write (another writer?)"};
    }
    auto r = api.patch(s->path, s->type, s->body);
    if (r.ok()) {
      add_counts(done, s->counts);
      current = std::move(*r);
      continue;
    }
    if (r.error().not_found()) return Ok{};  // deleted since the list: nothing of ours left on it
    if (!r.error().conflict() || ++conflicts > kPruneConflictRetries) return r.error();
    spdlog::info("prune: {} changed while pruning it ({}); reading it again", path, r.error().message);
    auto again = api.get(path);
    if (!again.ok()) return again.error().not_found() ? ApiStatus(Ok{}) : ApiStatus(again.error());
    current = std::move(*again);
  }
}

}  // namespace

std::string pruned_object_id(const PrunedObject& o) {
  return o.kind == PrunedKind::kNode ? "node/" + o.name : "persistentvolumeclaim/" + o.ns + "/" + o.name;
}

std::string pruned_object_line(const PrunedObject& o, bool dry_run) {
  std::vector<std::string> parts;
  if (o.kind == PrunedKind::kNode) parts.push_back(plural(o.labels, "label"));
  parts.push_back(plural(o.annotations, "annotation"));
  if (o.kind == PrunedKind::kNode) {
    parts.push_back(plural(o.taints, "taint"));
    parts.push_back(plural(o.conditions, "condition"));
  }
  return fmt::format("{} pruned{}: {}", pruned_object_id(o), dry_run ? " (dry run)" : "", fmt::join(parts, ", "));
}

IogateKeys node_iogate_keys(const nlohmann::json& node) {
  IogateKeys k;
  const nlohmann::json& meta = object_at(node, "metadata");
  k.labels = iogate_keys_of(object_at(meta, "labels"));
  k.annotations = iogate_keys_of(object_at(meta, "annotations"));
  for (const nlohmann::json& t : array_at(object_at(node, "spec"), "taints")) {
    if (ours(string_at(t, "key"))) ++k.taints;
    else k.kept_taints.push_back(t);
  }
  for (const nlohmann::json& c : array_at(object_at(node, "status"), "conditions")) {
    const std::string type = string_at(c, "type");
    for (const char* owned : kOwnedConditions) {
      if (type == owned) k.conditions.push_back(type);
    }
  }
  return k;
}

std::vector<std::string> pvc_iogate_annotations(const nlohmann::json& pvc) {
  return iogate_keys_of(object_at(object_at(pvc, "metadata"), "annotations"));
}

PruneOutcome prune_iogate_keys(ApiClient& api, const PruneOptions& options,
                               const std::function<void(const PrunedObject&)>& on_pruned) {
  PruneOutcome out;
  auto finish = [&](PrunedObject& o, const ApiStatus& s) {
    if (o.any()) {
      out.pruned.push_back(o);
      if (on_pruned) on_pruned(o);
    }
    if (!s.ok()) out.failures.push_back(fmt::format("{}: {}", pruned_object_id(o), s.error().summary()));
  };

  auto nodes = list_all(api, "/api/v1/nodes");
  if (!nodes.ok()) {
    out.failures.push_back("nodes: " + nodes.error().summary());
  } else {
    out.nodes_seen = static_cast<int>(nodes->size());
    for (const nlohmann::json& node : *nodes) {
      PrunedObject o;
      o.name = string_at(object_at(node, "metadata"), "name");
      if (options.dry_run) {
        IogateKeys k = node_iogate_keys(node);
        o.labels = static_cast<int>(k.labels.size());
        o.annotations = static_cast<int>(k.annotations.size());
        o.taints = k.taints;
        o.conditions = static_cast<int>(k.conditions.size());
        finish(o, Ok{});
        continue;
      }
      auto next = [&](const nlohmann::json& current) { return next_node_step(o.name, current); };
      finish(o, prune_object(api, "/api/v1/nodes/" + o.name, node, next, o));
    }
  }
  for (const std::string& ns : options.pvc_namespaces) {
    auto pvcs = list_all(api, "/api/v1/namespaces/" + ns + "/persistentvolumeclaims");
    if (!pvcs.ok()) {
      out.failures.push_back(fmt::format("persistentvolumeclaims in {}: {}", ns, pvcs.error().summary()));
      continue;
    }
    out.pvcs_seen += static_cast<int>(pvcs->size());
    for (const nlohmann::json& pvc : *pvcs) {
      PrunedObject o;
      o.kind = PrunedKind::kPvc;
      o.ns = ns;
      o.name = string_at(object_at(pvc, "metadata"), "name");
      if (options.dry_run) {
        o.annotations = static_cast<int>(pvc_iogate_annotations(pvc).size());
        finish(o, Ok{});
        continue;
      }
      auto next = [&](const nlohmann::json& current) { return next_pvc_step(ns, o.name, current); };
      finish(o, prune_object(api, "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + o.name, pvc, next, o));
    }
  }
  return out;
}

}  // namespace iogate
