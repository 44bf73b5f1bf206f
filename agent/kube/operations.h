// The Kubernetes operations iogate performs, with the semantics each object's fields need:
// annotations and labels by merge patch, taints by read-modify-write with optimistic concurrency,
// node conditions by strategic merge patch on nodes/status, Events through events.k8s.io/v1.
// Results convert to Result<T> / Status; keep the ApiResult to branch on 404, 403 or 409.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "kube/api_client.h"

namespace iogate {

// Keys to set (a value) or remove (std::nullopt), as a merge patch expresses them. These patches
// carry no resourceVersion, so a 409 on one is retried with the client's backoff and deadline.
using MetadataChanges = std::map<std::string, std::optional<std::string>>;

// --- Pods and PersistentVolumeClaims ---
ApiResult<nlohmann::json> get_pod(ApiClient& api, const std::string& ns, const std::string& name);
ApiStatus patch_pod_annotations(ApiClient& api, const std::string& ns, const std::string& name,
                                const MetadataChanges& annotations);
ApiResult<nlohmann::json> get_pvc(ApiClient& api, const std::string& ns, const std::string& name);
ApiStatus patch_pvc_annotations(ApiClient& api, const std::string& ns, const std::string& name,
                                const MetadataChanges& annotations);

// --- Nodes ---
ApiResult<nlohmann::json> get_node(ApiClient& api, const std::string& name);
// Merge patches on metadata.labels / metadata.annotations: other keys are left as they are.
ApiStatus patch_node_labels(ApiClient& api, const std::string& node, const MetadataChanges& labels);
ApiStatus patch_node_annotations(ApiClient& api, const std::string& node, const MetadataChanges& annotations);

struct Taint {
  std::string key, value, effect;  // effect: NoSchedule | PreferNoSchedule | NoExecute
};

// spec.taints is an atomic list: any patch replaces it whole. So: GET the node, edit the list
// (only the entry with our key and effect), PATCH it together with the GET's resourceVersion so a
// concurrent writer makes the API answer 409, then GET again and redo the edit (at most
// kTaintConflictRetries times), as the node lifecycle controller does. Another owner's taints are
// carried over untouched. No PATCH when the list is already as wanted.
inline constexpr int kTaintConflictRetries = 5;
ApiStatus ensure_node_taint(ApiClient& api, const std::string& node, const Taint& taint);
// Removes the taint with this key and effect (any effect when `effect` is "", as `kubectl taint
// node N key-` does).
ApiStatus remove_node_taint(ApiClient& api, const std::string& node, const std::string& key, const std::string& effect);

struct NodeCondition {
  std::string type;    // "StorageBelowPolicy"
  std::string status;  // True | False | Unknown
  std::string reason, message;
};

// Strategic merge patch of {"status":{"conditions":[...]}} on nodes/NAME/status: conditions merge
// by type there, so the kubelet's own (Ready, DiskPressure, ...) survive; a merge patch would
// replace the list. lastHeartbeatTime is now; lastTransitionTime is now only when the status
// changes (the node is read first), else the previous one is kept.
ApiStatus set_node_condition(ApiClient& api, const std::string& node, const NodeCondition& condition);

// --- Events ---
struct EventSpec {
  std::string ns;            // events about a Node go in "default"
  nlohmann::json regarding;  // {kind, namespace, name, uid, apiVersion}
  std::string type;          // Normal | Warning
  std::string reason;        // "StoragePolicyMet"
  std::string note;          // the human sentence (truncated to the API's 1 kB)
  std::string action;        // what was done: "Preflight", "Probe"
  std::string reporting_controller = "iogate.io/preflight";
  std::string reporting_instance;  // "" → "iogate-<hostname>"
};

// What an Event says: Normal or Warning, its reason ("StoragePolicyMet") and the sentence.
struct EventText {
  std::string type, reason, note;
};

// The Event `text` about the `kind` object ns/name whose uid is in `object` (as read from the API):
// in its namespace, or in "default" for a cluster-scoped one (ns ""), where client-go's recorder
// files a Node's. The caller sets action and the reporting controller and instance.
EventSpec event_about(std::string_view kind, const std::string& ns, const std::string& name,
                      const nlohmann::json& object, const EventText& text);

// events.k8s.io/v1 (eventTime in microseconds, reportingController, reportingInstance, action,
// regarding, note). An API server without that group (404) gets a core/v1 Event instead
// (involvedObject, message, first/lastTimestamp, count, source.component, reportingComponent).
// Named like client-go's recorder names them: <regarding.name>.<hex nanoseconds>.
ApiStatus create_event(ApiClient& api, const EventSpec& event);

// --- Reading pod specs (no API calls) ---

// GPUs the pod holds while its main containers run, as the scheduler counts them: the larger of
// (a) the sum over spec.containers plus restartable (sidecar) init containers and (b) for each
// regular init container, its own count plus the sidecars started before it. Per container, the
// limit of nvidia.com/gpu plus amd.com/gpu plus each of `extra_resources` (a cluster's other GPU
// resource names, e.g. "gpu.intel.com/i915"; requests when a limit is absent; extended resources
// cannot be overcommitted, so the two are equal when both are set). Quantities are capped at
// 1,000,000, so a garbage object cannot overflow the count.
int pod_gpu_count(const nlohmann::json& pod, const std::vector<std::string>& extra_resources = {});

// A container's resource list as kubectl's --requests and --limits wrote it, "cpu=500m,memory=256Mi":
// names and quantities in Kubernetes' syntax (a decimal with an SI or binary suffix, or an
// exponent), checked here so that a bad one fails when iogate starts, not in every pod it is put
// into. A usage error names `what` and the entry.
Result<std::map<std::string, std::string>> parse_resource_list(std::string_view text, std::string_view what);

// The GPUs a node has: status.capacity nvidia.com/gpu + amd.com/gpu (what the device plugins
// advertise; allocatable when capacity lacks them), else GPU Feature Discovery's label
// nvidia.com/gpu.count (set before the device plugin runs, or where it does not). `from` says which.
struct NodeGpus {
  int count = 0;
  std::string from;  // "status.capacity", "status.allocatable", "label nvidia.com/gpu.count", "none"
};
NodeGpus node_gpu_count(const nlohmann::json& node);

// The PersistentVolumeClaim behind `path` inside the pod: the volumeMount whose mountPath is the
// longest path-component prefix of `path` (in container `container_hint` when the pod has one of
// that name, else in any container or init container) and whose volume is a
// persistentVolumeClaim. std::nullopt for hostPath, emptyDir, ephemeral and other volumes, and
// when no mount holds the path.
std::optional<std::string> pvc_for_path(const nlohmann::json& pod, const std::string& path,
                                        const std::string& container_hint = "");

}  // namespace iogate
