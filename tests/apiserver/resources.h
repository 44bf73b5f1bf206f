// The resource types this test server serves, and the conversion between the two API versions
// of Events (core/v1 and events.k8s.io/v1 are one stored object seen through two schemas).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace iogate::apiserver {

struct ResourceType {
  std::string resource;  // plural, as in URLs: "pods"
  std::string kind;      // "Pod"
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  bool namespaced = true;
  std::vector<std::string> short_names;
  bool has_status = false;  // has a status subresource; writes to the main resource keep status
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

// Every type served, core/v1 first, then events.k8s.io/v1.
const std::vector<ResourceType>& served_resources();

std::optional<ResourceType> find_resource(const std::string& group, const std::string& resource);
// By kind, for seeding: "Pod" → pods. Events resolve to core/v1 events (the stored form).
std::optional<ResourceType> find_kind(const std::string& kind);

// Events: core/v1 is the stored form. These convert a whole object (kind/apiVersion included).
nlohmann::json event_to_events_v1(const nlohmann::json& core_event);
nlohmann::json event_from_events_v1(const nlohmann::json& events_v1_event);

}  // namespace iogate::apiserver
