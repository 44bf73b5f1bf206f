#include "resources.h"

#include <utility>

namespace iogate::apiserver {

using nlohmann::json;

const std::vector<ResourceType>& served_resources() {
  static const std::vector<ResourceType> types = {
      {"pods", "Pod", "", "v1", true, {"po"}, true},
      {"nodes", "Node", "", "v1", false, {"no"}, true},
      {"persistentvolumeclaims", "PersistentVolumeClaim", "", "v1", true, {"pvc"}, true},
      {"events", "Event", "", "v1", true, {"ev"}, false},
      {"namespaces", "Namespace", "", "v1", false, {"ns"}, true},
      {"events", "Event", "events.k8s.io", "v1", true, {"ev"}, false},
  };
  return types;
}

std::optional<ResourceType> find_resource(const std::string& group, const std::string& resource) {
  for (const auto& t : served_resources()) {
    if (t.group == group && t.resource == resource) return t;
  }
  return std::nullopt;
}

std::optional<ResourceType> find_kind(const std::string& kind) {
  for (const auto& t : served_resources()) {
    if (t.kind == kind) return t;  // core/v1 first
  }
  return std::nullopt;
}

namespace {

// (core/v1 field, events.k8s.io/v1 field) pairs that differ only in name.
const std::vector<std::pair<std::string, std::string>>& renamed_fields() {
  static const std::vector<std::pair<std::string, std::string>> pairs = {
      {"involvedObject", "regarding"},
      {"message", "note"},
      {"reportingComponent", "reportingController"},
      {"source", "deprecatedSource"},
      {"firstTimestamp", "deprecatedFirstTimestamp"},
      {"lastTimestamp", "deprecatedLastTimestamp"},
      {"count", "deprecatedCount"},
  };
  return pairs;
}

json rename(const json& in, bool to_v1) {
  json out = in;
  for (const auto& [core, v1] : renamed_fields()) {
    const std::string& from = to_v1 ? core : v1;
    const std::string& to = to_v1 ? v1 : core;
    out.erase(to);
    if (auto it = in.find(from); it != in.end()) {
      out.erase(from);
      // Empty legacy values are dropped from events.k8s.io/v1 views, as Go omitempty does.
      bool empty = it->is_null() || (it->is_string() && it->get<std::string>().empty()) ||
                   (it->is_object() && it->empty()) || (it->is_number() && *it == 0);
      if (!(to_v1 && empty)) out[to] = *it;
    }
  }
  return out;
}

}  // namespace

json event_to_events_v1(const json& core_event) {
  json out = rename(core_event, true);
  out["apiVersion"] = "events.k8s.io/v1";
  out["kind"] = "Event";
  return out;
}

json event_from_events_v1(const json& v1_event) {
  json out = rename(v1_event, false);
  out["apiVersion"] = "v1";
  out["kind"] = "Event";
  return out;
}

}  // namespace iogate::apiserver
