#include "patch.h"

#include <algorithm>
#include <map>

namespace iogate::apiserver {

using nlohmann::json;

std::optional<PatchType> patch_type_from_content_type(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  if (media == "application/merge-patch+json") return PatchType::kMerge;
  if (media == "application/strategic-merge-patch+json") return PatchType::kStrategicMerge;
  if (media == "application/json-patch+json") return PatchType::kJson;
  return std::nullopt;
}

// patchStrategy/patchMergeKey struct tags of k8s.io/api core/v1 for the fields of our kinds.
ListStrategy list_strategy(const std::string& kind, const std::string& path) {
  using K = ListStrategy;
  static const std::map<std::string, ListStrategy> common = {
      {"metadata.ownerReferences", {K::kMergeByKey, "uid"}},
      {"metadata.finalizers", {K::kMergeSet, ""}},
  };
  static const std::map<std::string, std::map<std::string, ListStrategy>> by_kind = {
      {"Pod",
       {
           {"spec.containers", {K::kMergeByKey, "name"}},
           {"spec.initContainers", {K::kMergeByKey, "name"}},
           {"spec.ephemeralContainers", {K::kMergeByKey, "name"}},
           {"spec.containers.env", {K::kMergeByKey, "name"}},
           {"spec.initContainers.env", {K::kMergeByKey, "name"}},
           {"spec.containers.ports", {K::kMergeByKey, "containerPort"}},
           {"spec.initContainers.ports", {K::kMergeByKey, "containerPort"}},
           {"spec.containers.volumeMounts", {K::kMergeByKey, "mountPath"}},
           {"spec.initContainers.volumeMounts", {K::kMergeByKey, "mountPath"}},
           {"spec.containers.volumeDevices", {K::kMergeByKey, "devicePath"}},
           {"spec.initContainers.volumeDevices", {K::kMergeByKey, "devicePath"}},
           {"spec.volumes", {K::kMergeByKey, "name"}},
           {"spec.imagePullSecrets", {K::kMergeByKey, "name"}},
           {"spec.hostAliases", {K::kMergeByKey, "ip"}},
           {"spec.topologySpreadConstraints", {K::kMergeByKey, "topologyKey"}},
           {"spec.resourceClaims", {K::kMergeByKey, "name"}},
           {"spec.schedulingGates", {K::kMergeByKey, "name"}},
           {"status.conditions", {K::kMergeByKey, "type"}},
           {"status.podIPs", {K::kMergeByKey, "ip"}},
           {"status.hostIPs", {K::kMergeByKey, "ip"}},
       }},
      {"Node",
       {
           // spec.taints has no patch strategy: atomic, so a patch carries the whole list.
           {"spec.podCIDRs", {K::kMergeSet, ""}},
           {"status.conditions", {K::kMergeByKey, "type"}},
           {"status.addresses", {K::kMergeByKey, "type"}},
       }},
      {"PersistentVolumeClaim",
       {
           {"status.conditions", {K::kMergeByKey, "type"}},
       }},
  };
  if (auto it = common.find(path); it != common.end()) return it->second;
  if (auto k = by_kind.find(kind); k != by_kind.end()) {
    if (auto it = k->second.find(path); it != k->second.end()) return it->second;
  }
  return {};
}

json merge_patch(json target, const json& patch) {
  target.merge_patch(patch);  // nlohmann implements RFC 7386 exactly
  return target;
}

namespace {

constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }
bool is_directive(const std::string& key) { return !key.empty() && key[0] == '$'; }

// One strategic merge, carrying the object's kind (for list strategies) and the first error.
class StrategicMerge {
 public:
  explicit StrategicMerge(const std::string& kind) : kind_(kind) {}
  std::optional<ApiError> error;

  // nullopt: the map asked to be deleted ($patch: delete).
  std::optional<json> merge_map(json original, const json& patch, const std::string& path) {
    if (!original.is_object()) original = json::object();
    if (auto p = patch.find("$patch"); p != patch.end()) {
      if (*p == "delete") return std::nullopt;
      if (*p == "replace") return strip(patch, path);
      fail(bad_request("Unknown patch type: " + p->dump()));
      return original;
    }
    if (auto keep = patch.find("$retainKeys"); keep != patch.end() && keep->is_array()) {
      for (auto it = original.begin(); it != original.end();) {
        bool kept = std::find(keep->begin(), keep->end(), it.key()) != keep->end();
        it = kept ? std::next(it) : original.erase(it);
      }
    }
    for (const auto& [key, value] : patch.items()) {
      if (is_directive(key)) continue;
      const std::string child = path.empty() ? key : path + "." + key;
      if (value.is_null()) {
        original.erase(key);
      } else if (value.is_object()) {
        auto merged = merge_map(original.contains(key) ? original[key] : json::object(), value, child);
        if (merged) original[key] = std::move(*merged);
        else original.erase(key);
      } else if (value.is_array()) {
        json current = original.contains(key) && original[key].is_array() ? original[key] : json::array();
        original[key] = merge_list(std::move(current), value, child);
      } else {
        original[key] = value;
      }
    }
    for (const auto& [key, value] : patch.items()) {
      if (starts_with(key, kDeleteFromPrimitiveList)) {
        std::string field = key.substr(kDeleteFromPrimitiveList.size());
        if (original.contains(field) && original[field].is_array() && value.is_array()) {
          json& list = original[field];
          for (const auto& gone : value) list.erase(std::remove(list.begin(), list.end(), gone), list.end());
        }
      }
    }
    for (const auto& [key, value] : patch.items()) {
      if (starts_with(key, kSetElementOrder)) {
        std::string field = key.substr(kSetElementOrder.size());
        if (original.contains(field) && original[field].is_array() && value.is_array()) {
          original[field] = reorder(original[field], value, list_strategy(kind_, join(path, field)));
        }
      }
    }
    return original;
  }

 private:
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  void fail(ApiError e) {
    if (!error) error = std::move(e);
  }

  // A patch fragment written into a place with nothing to merge with: directives and nulls go.
  json strip(const json& patch, const std::string& path) {
    json out = json::object();
    for (const auto& [key, value] : patch.items()) {
      if (is_directive(key) || value.is_null()) continue;
      const std::string child = join(path, key);
      if (value.is_object()) out[key] = strip(value, child);
      else if (value.is_array()) out[key] = merge_list(json::array(), value, child);
      else out[key] = value;
    }
    return out;
  }

  json merge_list(json current, const json& patch, const std::string& path) {
    ListStrategy strategy = list_strategy(kind_, path);
    if (strategy.kind == ListStrategy::kAtomic) return patch;
    if (strategy.kind == ListStrategy::kMergeSet) {
      for (const auto& v : patch) {
        if (v.is_object() && v.contains("$patch")) {
          if (v["$patch"] == "replace") return without_directives(patch);
          continue;
        }
        if (std::find(current.begin(), current.end(), v) == current.end()) current.push_back(v);
      }
      return current;
    }
    const std::string& mk = strategy.merge_key;
    for (const auto& item : patch) {
      if (!item.is_object()) {
        fail(
            bad_request("json: cannot unmarshal " + std::string(item.type_name()) + " into a list of maps at " + path));
        return current;
      }
      if (auto p = item.find("$patch"); p != item.end()) {
        if (*p == "replace") return without_directives(patch);
        if (*p == "delete" && item.contains(mk)) {
          current.erase(std::remove_if(current.begin(), current.end(),
                                       [&](const json& e) { return e.is_object() && e.value(mk, json()) == item[mk]; }),
                        current.end());
          continue;
        }
      }
      if (!item.contains(mk)) {
        fail(internal_error("map: " + item.dump() + " does not contain declared merge key: " + mk));
        return current;
      }
      auto match = std::find_if(current.begin(), current.end(),
                                [&](const json& e) { return e.is_object() && e.value(mk, json()) == item[mk]; });
      if (match != current.end()) {
        auto merged = merge_map(*match, item, path);
        if (merged) *match = std::move(*merged);
        else current.erase(match);
      } else {
        current.push_back(strip(item, path));
      }
    }
    return current;
  }

  static json without_directives(const json& list) {
    json out = json::array();
    for (const auto& v : list) {
      if (v.is_object() && v.contains("$patch")) continue;
      out.push_back(v);
    }
    return out;
  }

  // $setElementOrder: the listed elements first, in the given order; unlisted ones keep theirs.
  static json reorder(const json& list, const json& order, const ListStrategy& strategy) {
    json out = json::array();
    std::vector<bool> used(list.size(), false);
    for (const auto& want : order) {
      for (size_t i = 0; i < list.size(); ++i) {
        if (used[i]) continue;
        bool same = strategy.kind == ListStrategy::kMergeByKey
                        ? (list[i].is_object() && want.is_object() &&
                           list[i].value(strategy.merge_key, json()) == want.value(strategy.merge_key, json()))
                        : list[i] == want;
        if (same) {
          out.push_back(list[i]);
          used[i] = true;
          break;
        }
      }
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (!used[i]) out.push_back(list[i]);
    }
    return out;
  }

  const std::string& kind_;
};

ApiError rejected_patch(const std::string& why) {
  // What NewGenericServerResponse(422, ...) makes of a JSON patch that cannot apply.
  return {422, "Invalid", "the server rejected our request due to an error in our request",
          json{{"causes", json::array({{{"reason", "UnexpectedServerResponse"}, {"message", why}}})}}};
}

}  // namespace

ApiResult<json> strategic_merge_patch(const std::string& kind, const json& original, const json& patch) {
  if (!patch.is_object())
    return bad_request("json: cannot unmarshal " + std::string(patch.type_name()) +
                       " into Go value of type map[string]interface {}");
  StrategicMerge merge(kind);
  auto merged = merge.merge_map(original, patch, "");
  if (merge.error) return *merge.error;
  return merged ? *merged : json::object();
}

ApiResult<json> apply_patch(PatchType type, const std::string& kind, const json& object,
                            const std::string& patch_body) {
  json patch = json::parse(patch_body, nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) return bad_request("error decoding patch: invalid JSON in the request body");
  switch (type) {
    case PatchType::kMerge:
      if (!patch.is_object()) return bad_request("error decoding patch: a merge patch must be a JSON object");
      return merge_patch(object, patch);
    case PatchType::kStrategicMerge: return strategic_merge_patch(kind, object, patch);
    case PatchType::kJson:
      if (!patch.is_array()) {
        return bad_request("json: cannot unmarshal " + std::string(patch.type_name()) +
                           " into Go value of type jsonpatch.Patch");
      }
      try {
        return object.patch(patch);
      } catch (const json::exception& e) {
        return rejected_patch(e.what());
      }
  }
  return internal_error("unknown patch type");
}

}  // namespace iogate::apiserver
