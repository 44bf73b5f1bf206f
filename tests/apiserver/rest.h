// The Kubernetes REST semantics of the served resources over an ObjectStore: get, list (with
// label and field selectors, and Table output), create, patch and update (resourceVersion
// preconditions, status subresource rules, validation, dryRun), delete.
#pragma once

#include <optional>
#include <string>

#include "api_status.h"
#include "api_types.h"
#include "object_store.h"
#include "resources.h"

namespace iogate::apiserver {

struct RestTarget {
  ResourceType type;
  std::string ns;           // empty for cluster-scoped resources and all-namespace lists
  std::string name;         // empty for the collection
  std::string subresource;  // "status" or empty
};

// "/api/v1/namespaces/ns1/pods/p1/status" → {pods, ns1, p1, status}; nullopt when the path names
// no served resource.
std::optional<RestTarget> parse_resource_path(const std::string& path);

// Serves one authenticated request on a resource path.
ApiResponse serve_rest(ObjectStore& store, const RestTarget& target, const ApiRequest& request);

// Seeds the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease).
void seed_system_namespaces(ObjectStore& store);

// The JSON response with a Status body for an error.
ApiResponse error_response(const ApiError& error);
ApiResponse json_response(int status, const nlohmann::json& body);

}  // namespace iogate::apiserver
