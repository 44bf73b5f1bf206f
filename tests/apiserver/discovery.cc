#include "discovery.h"

#include "resources.h"

namespace iogate::apiserver {

using nlohmann::json;

namespace {

// What the server implements: no watch, no deletecollection.
const json kObjectVerbs = json::array({"create", "delete", "get", "list", "patch", "update"});
const json kStatusVerbs = json::array({"get", "patch", "update"});

std::string singular(const ResourceType& t) {
  std::string s = t.kind;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

json group_version_entry(const std::string& group) { return {{"groupVersion", group + "/v1"}, {"version", "v1"}}; }

}  // namespace

json version_document() {
  // A 1.32 server: the kubectl dispatcher on this machine picks its kubectl from this minor.
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.4"},
          {"gitCommit", "59526cd4867447956156ae3a602fcbac10a2c335"},
          {"gitTreeState", "clean"},
          {"buildDate", "2025-04-22T16:03:10Z"},
          {"goVersion", "go1.23.6"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

json api_versions_document(const std::string& server_address) {
  return {
      {"kind", "APIVersions"},
      {"versions", json::array({"v1"})},
      {"serverAddressByClientCIDRs", json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}};
}

json api_group_list_document() {
  return {
      {"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array({*api_group_document("events.k8s.io")})}};
}

std::optional<json> api_group_document(const std::string& group) {
  if (group != "events.k8s.io") return std::nullopt;
  return json{{"kind", "APIGroup"},
              {"apiVersion", "v1"},
              {"name", group},
              {"versions", json::array({group_version_entry(group)})},
              {"preferredVersion", group_version_entry(group)}};
}

std::optional<json> api_resource_list(const std::string& group, const std::string& version) {
  if (version != "v1" || (!group.empty() && group != "events.k8s.io")) return std::nullopt;
  json resources = json::array();
  for (const auto& t : served_resources()) {
    if (t.group != group) continue;
    json r = {{"name", t.resource},
              {"singularName", singular(t)},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", kObjectVerbs}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (t.kind == "Pod") r["categories"] = json::array({"all"});
    resources.push_back(r);
    if (t.has_status) {
      resources.push_back({{"name", t.resource + "/status"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", t.kind},
                           {"verbs", kStatusVerbs}});
    }
  }
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? "v1" : group + "/v1"},
              {"resources", resources}};
}

}  // namespace iogate::apiserver
