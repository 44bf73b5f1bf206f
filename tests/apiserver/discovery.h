// The discovery documents kubectl reads before anything else: /version, /api, /apis, and the
// APIResourceList of each served group version. Plain (unaggregated) documents: kubectl asks for
// aggregated discovery first and falls back to these when the reply is application/json.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace iogate::apiserver {

nlohmann::json version_document();
nlohmann::json api_versions_document(const std::string& server_address);  // /api
nlohmann::json api_group_list_document();                                 // /apis
// /api/v1 (group "") or /apis/events.k8s.io/v1; nullopt for a group version not served.
std::optional<nlohmann::json> api_resource_list(const std::string& group, const std::string& version);
// /apis/events.k8s.io: the APIGroup document.
std::optional<nlohmann::json> api_group_document(const std::string& group);

}  // namespace iogate::apiserver
