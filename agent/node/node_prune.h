// `iogate node prune`: what `helm uninstall` runs last (the chart's post-delete hook Job), as
// NFD's `nfd-master -prune` does: remove from every Node what the node agent wrote, and from the
// PVCs of the given namespaces what preflight wrote, and nothing else.
//
// Removed from a Node: every label and annotation whose key starts with iogate.io/, every taint
// whose key does, and the conditions iogate owns, by type (StorageBelowPolicy). From a PVC: every
// iogate.io/ annotation (the shared probe-result, probe-lock, a job's job-probe.<hash>), which a
// reinstall would otherwise reuse as a fresh measurement. Pods are left alone: their iogate.io/
// annotations are the record of a verdict on a workload and the user's own inputs
// (inject-preflight, job, job-pods, skip), and they go with the pods.
//
// Every write carries the resourceVersion it was computed from, so a concurrent writer makes the
// API answer 409 and the object is read again and the edit redone (at most kPruneConflictRetries
// times per object): a foreign taint added in between is never replaced by a stale list. Labels,
// annotations and taints go in one merge patch of the Node; the conditions in a strategic merge
// patch of nodes/NAME/status with `$patch: delete` per type (conditions merge by type there, so
// the kubelet's are untouched). An object deleted meanwhile (404) is done, not a failure. A dry
// run reads and counts, and writes nothing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace iogate {

inline constexpr int kPruneConflictRetries = 5;

enum class PrunedKind { kNode, kPvc };

// What was (or, in a dry run, would be) removed from one object.
struct PrunedObject {
  PrunedKind kind = PrunedKind::kNode;
  std::string ns;  // "" for a Node
  std::string name;
  int labels = 0, annotations = 0, taints = 0, conditions = 0;
  bool any() const { return labels + annotations + taints + conditions > 0; }
};

// "node/n1" or "persistentvolumeclaim/ml/imagenet".
std::string pruned_object_id(const PrunedObject& o);
// "node/n1 pruned: 3 labels, 1 annotation, 1 taint, 1 condition" (" (dry run)" after "pruned").
std::string pruned_object_line(const PrunedObject& o, bool dry_run);

// The iogate.io/ keys of one object as read from the API (pure, no API call): what prune removes.
struct IogateKeys {
  std::vector<std::string> labels, annotations;
  nlohmann::json kept_taints = nlohmann::json::array();  // every taint not ours, in order
  int taints = 0;                                        // ours, to remove
  std::vector<std::string> conditions;                   // the owned condition types present
  bool metadata_or_spec() const { return !labels.empty() || !annotations.empty() || taints > 0; }
};
IogateKeys node_iogate_keys(const nlohmann::json& node);
std::vector<std::string> pvc_iogate_annotations(const nlohmann::json& pvc);

struct PruneOptions {
  std::vector<std::string> pvc_namespaces;  // PVCs pruned in these; empty: none
  bool dry_run = false;
};

struct PruneOutcome {
  int nodes_seen = 0, pvcs_seen = 0;
  std::vector<PrunedObject> pruned;   // the objects changed (would change), in the order done
  std::vector<std::string> failures;  // one line each: the object and the API's error
};

// Lists the Nodes (and the PVCs of each namespace), prunes each that has iogate keys, and goes on
// past a failure to the next object, so one refusal does not leave the rest. `on_pruned` is called
// as each object is done (the CLI prints it at once).
PruneOutcome prune_iogate_keys(ApiClient& api, const PruneOptions& options,
                               const std::function<void(const PrunedObject&)>& on_pruned = {});

}  // namespace iogate
