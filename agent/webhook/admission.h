// `iogate webhook`'s decisions: one pure function per endpoint, from the AdmissionReview's bytes
// (and, for /validate, a node lookup) to the HTTP answer. No sockets, no API calls of its own, no
// state: the HTTPS server, the node cache and the CLI live elsewhere and call these.
//
// /mutate keeps GPU pods on nodes the node agent (iogate node) found fast enough, by adding a
// required node affinity on the labels it writes (iogate.io/randread-iops, iogate.io/disk-class),
// and on request injects the preflight initContainer. /validate refuses a GPU pod pinned to a node
// (spec.nodeName, nodeSelector kubernetes.io/hostname, a DaemonSet's matchFields metadata.name)
// whose labels say it is below policy or that carries the taint iogate.io/storage-below-policy:
// such a pod bypasses the scheduler, so the affinity alone would only fail it on the kubelet.
//
// Which pods: those that request GPUs (nvidia.com/gpu, amd.com/gpu and
// WebhookConfig::extra_gpu_resources) and those a policy rule selects by pod labels (the labels
// the policy names); other pods pass unchanged, but for a preflight injection they ask for (an
// explicit request, honoured for any pod). Only CREATE (and UPDATE for /validate) of pods
// (group "", resource pods, no subresource) is acted on; anything else is allowed as it is.
//
// What the policy means before the pod runs (storage_demand.h has the details):
// - The IOPS floor is preflight's: max(min_iops, min_iops_per_gpu × the pod's GPUs), bandwidth
//   floors converted to IOPS at the workload's block size, the highest of the applicable rules.
//   It becomes `iogate.io/randread-iops Gt <floor - 1>` (the label is an integer), and only for
//   randread workloads: the node agent writes that label for no other.
// - A rule with a demand (workload.mode auto or dataset) asks for a node that sustains N
//   accelerators of it, N the pod's GPUs (at least 1): `iogate.io/accelerators.<rule> Gt <N-1>`,
//   the label the node agent writes from the same computation (policy/demand.h). /mutate also
//   answers a warning naming the rule, N and the samples/s they need, which kubectl apply shows:
//   a pod no node sustains stays Pending, and the scheduler's message alone would not say why.
// - Rules whose selector names pod_labels apply as preflight applies them.
// - Rules whose selector names paths: the dataset path is unknown at admission, so they count as
//   applicable (strict), except when the pod asks for preflight injection, whose path is known.
// - Rules whose selector names device_classes apply to nodes of those classes: the node's class is
//   its disk-class label, so floors and allowed/forbidden classes are worked out per class, and a
//   policy whose floors differ by class gives one nodeSelectorTerm per floor.
//
// Failure stance: fail open on what iogate cannot know. A node that is not found, a lookup error,
// a node not labelled yet → allowed, with a warning in response.warnings. A body that is no JSON
// object gets HTTP 400 (413 when too large), a failed call for which the API server applies the
// webhook configuration's failurePolicy; a review missing what a decision needs is answered
// allowed: false, status.code 400 (see AdmissionOutcome).
//
// Side effects: none (the node lookup reads a cache the caller keeps), so dry-run requests
// (request.dryRun) need no special handling and get the same answer as real ones.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/policy.h"

namespace iogate {

// Pod annotations the webhook reads.
inline constexpr const char* kInjectPreflightAnnotation = "iogate.io/inject-preflight";  // a volume name
inline constexpr const char* kSkipAnnotation = "iogate.io/skip";                         // "true"
// The annotation /mutate writes beside the affinity, saying where its numbers come from: the
// affinity alone says "Gt 39999", not that 8 GPUs at 5,000 IOPS each make 40,000.
inline constexpr const char* kRequirementsAnnotation = "iogate.io/node-requirements";

// What the injected initContainer is called and where its policy is mounted.
inline constexpr const char* kPreflightContainerName = "iogate-preflight";
inline constexpr const char* kPolicyVolumeName = "iogate-policy";
inline constexpr const char* kPolicyMountPath = "/etc/iogate";
inline constexpr const char* kPolicyFileName = "policy.yaml";

// The longest AdmissionReview the webhook takes (the HTTPS server refuses a longer body unread,
// 413; webhook_server.h). The API server takes at most 3 MiB a request (MaxRequestBodyBytes, fixed
// in kube-apiserver), but what it sends a webhook is its own JSON of the object, after defaults
// and earlier webhooks, and of an UPDATE's old object too. A pod it can store is at most 1.5 MiB of
// protobuf (etcd's --max-request-bytes), which the API server writes as up to 2.5 times as much
// JSON (measured with its serializer: container ports 2.5, environment variables 2.2, node
// affinity 2.0, labels 1.0): an UPDATE review of two such pods and the envelope, 8 MiB. (Strings
// full of '<', '>' or '&' come out 6 times longer, \u003c: a review of such a pod can be longer
// still, and is refused.) Memory is not bounded by this but by the server's budgets: bodies in
// flight and reviews being parsed, each a review's json_footprint (about 14 times the densest
// JSON, so such a review over about 4.4 MiB is refused as one that could never fit).
inline constexpr size_t kMaxAdmissionBody = 8 * 1024 * 1024;
// JSON nested deeper is refused before parsing (400): a pod is nested about 15 levels, and code
// that walks JSON recursively (comparison, dump) must not meet 100,000.
inline constexpr int kMaxAdmissionJsonDepth = 100;

// What a lookup of a node by name gives. found false and error empty: no such node; error
// non-empty: the lookup failed (the API is down, RBAC). The caller caches; a lookup may throw,
// which counts as an error.
struct NodeView {
  bool found = false;
  std::string name;
  nlohmann::json node;  // the Node object: metadata.labels and spec.taints are read
  std::string error;
};
using NodeLookup = std::function<NodeView(const std::string& node_name)>;

struct WebhookConfig {
  const Policy* policy = nullptr;  // required; its mode decides: enforce, warn (never deny), off
  // Whether iogate.io/skip: "true" exempts a pod. Off by default: an annotation anyone who can
  // create a pod may set would otherwise void the policy. When off, the annotation earns a warning.
  bool allow_opt_out = false;
  std::string preflight_image = "iogate:0.1.0";
  // The ConfigMap holding the policy for the injected preflight, and its key.
  std::string policy_configmap = "iogate-policy";
  std::string policy_configmap_key = "policy.yaml";
  // The injected preflight's requests and limits ("cpu" → "1"), as the chart's named template
  // sets them; a namespace with a ResourceQuota refuses a pod whose init container has none.
  std::map<std::string, std::string> preflight_requests, preflight_limits;
  // Resource names counted as GPUs besides nvidia.com/gpu and amd.com/gpu.
  std::vector<std::string> extra_gpu_resources;
};

// The HTTP answer. 200 with an AdmissionReview (application/json) for every body that parses as
// a JSON object, even one that is no valid review: then allowed false, status.code 400 and a
// message, echoing request.uid where there is one. A body that is not JSON, not an object, or
// nested deeper than kMaxAdmissionJsonDepth: 400 and a short text/plain reason; one larger than
// kMaxAdmissionBody: 413 (the server refuses those before they get here). 500 (text/plain) only
// for a WebhookConfig without a policy or an exception that should not happen. The response
// echoes request.uid and is always apiVersion admission.k8s.io/v1, kind AdmissionReview.
// What an answer decided, for the metrics (metrics/webhook_metrics.h): allowed as it is, allowed
// with a patch, refused (allowed false: the policy, or a pod /mutate cannot be made to carry
// what the policy demands), or no decision (a body or review that cannot be judged, an internal
// error).
enum class AdmissionDecision { kAllowed, kMutated, kDenied, kError };
std::string_view admission_decision_name(AdmissionDecision d);  // "allowed", "mutated", "denied", "error"

// Why an answer is not the decision asked for: kBadRequest (400: no JSON object, or a review
// missing what a decision needs), kTooLarge (413), kInternal (500), kNodeLookup (a pinned node
// could not be read; allowed with a warning).
enum class AdmissionError { kNone, kBadRequest, kTooLarge, kInternal, kNodeLookup };
std::string_view admission_error_name(AdmissionError e);  // "", "bad_request", "too_large", ...
inline constexpr AdmissionError kAdmissionErrors[] = {AdmissionError::kBadRequest, AdmissionError::kTooLarge,
                                                      AdmissionError::kInternal, AdmissionError::kNodeLookup};

struct AdmissionOutcome {
  int http_status = 200;
  std::string content_type = "application/json";
  std::string body;
  // One line for the log (no newline, control characters escaped): endpoint, operation, pod,
  // uid, dry-run, the decision and why.
  std::string log_line;
  AdmissionDecision decision = AdmissionDecision::kAllowed;
  AdmissionError error = AdmissionError::kNone;
  std::string operation;  // request.operation as sent; "" when the body is no review
};

// /mutate: allowed, with a JSON patch (RFC 6902, base64, patchType JSONPatch) when there is
// something to add:
// - enforce mode: the node requirements go into every nodeSelectorTerm of
//   requiredDuringSchedulingIgnoredDuringExecution (terms are ORed, so each must carry them; a
//   term with neither matchExpressions nor matchFields matches no node and stays as it is), or
//   become its only term when the pod has none. Everything else the pod has is kept: other
//   expressions, matchFields, preferred terms, pod (anti-)affinity.
//   Beside it, annotation iogate.io/node-requirements: the requirements, policy, GPUs and rules.
// - warn mode: the same requirements as a preferred term (weight 100): steer, never refuse.
// - off: no affinity.
// - iogate.io/inject-preflight: "<volume>": the preflight initContainer, first, reading that
//   volume read-only at the mountPath the first container mounting it uses (else /data), with the
//   policy from WebhookConfig::policy_configmap. An unknown volume is refused (allowed false): the
//   pod asked to be checked and cannot be.
// Idempotent: expressions, preferred terms and the initContainer already there are not added again
// (reinvocationPolicy IfNeeded may call twice). A policy whose rules leave no disk class allowed
// refuses GPU pods in enforce mode (no node could take them).
AdmissionOutcome handle_mutate(std::string_view body, const WebhookConfig& config);

// /validate: refuses (403, enforce mode) a pod pinned to a node whose iogate.io/randread-iops is
// below the pod's floor, whose disk-class the policy does not allow, or that is tainted
// iogate.io/storage-below-policy; the message names the node, the measured and the required IOPS
// and the rule. Warn mode: allowed, the same text as warnings. Off: allowed without a lookup. An
// UPDATE is judged only when it changes the node the pod is pinned to (a running pod's label or
// finalizer update must not be refused because its node got slower).
AdmissionOutcome handle_validate(std::string_view body, const WebhookConfig& config, const NodeLookup& lookup);

}  // namespace iogate
