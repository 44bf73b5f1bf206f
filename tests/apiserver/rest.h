// The Kubernetes REST semantics of the served resources over an ObjectStore: get, list (with
// label and field selectors, and Table output), create, patch and update (resourceVersion
// preconditions, status subresource rules, validation, dryRun), delete.
#pragma once

#include <optional>
#include <string>

#include "api_result.h"
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

// What another client's write does to the object `target` names (its subresource ignored: the
// whole object, spec and status): `merge_patch` (RFC 7386) applied to the object as a GET of the
// path shows it, identity (name, namespace, uid, creationTimestamp, kind) kept, validated as an
// update, stored with a new resourceVersion unless it changes nothing. Returns what it stored;
// NotFound, or Invalid when the result would not pass validation (nothing is written then).
ApiResult<nlohmann::json> concurrent_write(ObjectStore& store, const RestTarget& target,
                                           const nlohmann::json& merge_patch);

// Seeds the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease).
void seed_system_namespaces(ObjectStore& store);

// The JSON response with a Status body for an error.
ApiResponse error_response(const ApiError& error);
ApiResponse json_response(int status, const nlohmann::json& body);

}  // namespace iogate::apiserver
