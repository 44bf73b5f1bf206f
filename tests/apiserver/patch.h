// The three patch types of the Kubernetes API, applied to an object as the API server applies them:
//   application/merge-patch+json            RFC 7386: objects merge, null deletes, lists replace.
//   application/strategic-merge-patch+json  like a merge patch, but a list declared with a patch
//                                           strategy merges (by its merge key, or as a set), and
//                                           directives ($patch, $setElementOrder/, $retainKeys,
//                                           $deleteFromPrimitiveList/) steer it. Other lists, such
//                                           as a Node's spec.taints, are atomic: replaced whole.
//   application/json-patch+json             RFC 6902 operations.
// The list strategies are those of the Go types for Pod, Node, PersistentVolumeClaim and Event
// (see list_strategy), at least for every field iogate touches.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "api_result.h"

namespace iogate::apiserver {

enum class PatchType { kMerge, kStrategicMerge, kJson };

// The patch type a Content-Type names (parameters such as "; charset=utf-8" ignored); nullopt for
// anything else, which the server answers with 415.
std::optional<PatchType> patch_type_from_content_type(std::string_view content_type);

// How a list field merges in a strategic merge patch.
struct ListStrategy {
  enum Kind { kAtomic, kMergeByKey, kMergeSet } kind = kAtomic;
  std::string merge_key;  // for kMergeByKey
};

// `path` is the dotted field path from the object root without list indices, e.g.
// "spec.containers.env" or "status.conditions". Unknown paths are atomic, as in Go.
ListStrategy list_strategy(const std::string& kind, const std::string& path);

// Applies `patch_body` (the raw request body) to `object` of kind `kind`. Errors are the ones the
// real server gives: 400 for a body that is not JSON (or not the right JSON shape), 422 for a JSON
// patch operation that cannot apply, 500 for a strategic merge list item without its merge key.
ApiResult<nlohmann::json> apply_patch(PatchType type, const std::string& kind, const nlohmann::json& object,
                                      const std::string& patch_body);

// The pieces, for tests.
nlohmann::json merge_patch(nlohmann::json target, const nlohmann::json& patch);
ApiResult<nlohmann::json> strategic_merge_patch(const std::string& kind, const nlohmann::json& original,
                                                const nlohmann::json& patch);

}  // namespace iogate::apiserver
