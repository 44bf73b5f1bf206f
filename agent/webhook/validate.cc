// /validate: refuse GPU pods pinned to a node whose storage is below policy (admission.h has the
// contract).
#include <exception>

#include <fmt/format.h>

#include "webhook/admission.h"
#include "webhook/node_check.h"
#include "webhook/pinned_node.h"
#include "webhook/pod_review.h"
#include "webhook/preflight_injection.h"
#include "webhook/storage_demand.h"

namespace iogate {
namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

AdmissionOutcome validate_pod(const PodReview& review, const WebhookConfig& config, const NodeLookup& lookup) {
  const Policy& policy = *config.policy;
  const AdmissionRequest& r = review.request;
  AdmissionResponse response;
  response.warnings = review.warnings;
  auto allow = [&](const std::string& why) {
    return review_outcome(r.uid, response, fmt::format("{}: allowed, {}", review.subject, why));
  };

  if (policy.mode == PolicyMode::kOff) return allow("policy mode off");
  std::optional<PinnedNode> pinned = pinned_node(r.object);
  if (!pinned) return allow("not pinned to a node");
  if (r.operation == "UPDATE") {
    std::optional<PinnedNode> before = pinned_node(r.old_object);
    if (before && before->name == pinned->name) return allow("the update keeps node " + pinned->name);
  }
  std::optional<std::string> inject = pod_annotation(r, kInjectPreflightAnnotation);
  std::optional<std::string> dataset_path;
  // The injected preflight's path, as /mutate worked it out (validating webhooks run after it).
  if (inject) dataset_path = preflight_dataset_path(r.object, *inject);
  StorageDemand demand = storage_demand(policy, r.object, config.extra_gpu_resources, dataset_path);
  if (!demand.selected) return allow("no GPUs and no rule selecting its labels");

  NodeView view;
  try {
    view = lookup(pinned->name);
  } catch (const std::exception& e) {
    view = NodeView{false, pinned->name, nullptr, e.what()};
  } catch (...) {
    view = NodeView{false, pinned->name, nullptr, "the lookup failed"};
  }
  if (!view.found) {
    std::string why = view.error.empty() ? fmt::format("node {} was not found", pinned->name)
                                         : fmt::format("node {} could not be read ({})", pinned->name, view.error);
    response.warnings.push_back("iogate: " + why + "; its storage was not checked against the policy");
    AdmissionOutcome o = allow(why);
    if (!view.error.empty()) o.error = AdmissionError::kNodeLookup;
    return o;
  }
  NodeFindings findings = check_node(demand, pinned->name, view.node);
  for (const std::string& u : findings.unchecked) response.warnings.push_back("iogate: " + u + "; not checked");
  if (findings.problems.empty()) {
    return allow(fmt::format("{} on node {} ({}){}", demand.selected_by, pinned->name, pinned->how,
                             findings.unchecked.empty() ? " meets the policy" : ": " + joined(findings.unchecked)));
  }
  std::string message = fmt::format("pod {} ({}) is pinned to node {} ({}), whose storage is below policy {}: {}",
                                    review.pod, demand.selected_by, pinned->name, pinned->how,
                                    policy.name.empty() ? policy.source : policy.name, joined(findings.problems));
  if (policy.mode == PolicyMode::kEnforce) return refusal(review, 403, message);
  // One warning per finding: the API server may cut a warning after 256 characters.
  for (const std::string& p : findings.problems)
    response.warnings.push_back(fmt::format("iogate: {}: {}", kWouldBlock, p));
  return allow(fmt::format("mode warn, {}: {}", kWouldBlock, message));
}

AdmissionOutcome validate(std::string_view body, const WebhookConfig& config, const NodeLookup& lookup) {
  PodReview review = review_pod("validate", body, config, {"CREATE", "UPDATE"});
  AdmissionOutcome o = review.answer ? std::move(*review.answer) : validate_pod(review, config, lookup);
  o.operation = review.request.operation;
  return o;
}

}  // namespace

AdmissionOutcome handle_validate(std::string_view body, const WebhookConfig& config, const NodeLookup& lookup) {
  try {
    return validate(body, config, lookup);
  } catch (const std::exception& e) {
    return plain_outcome(500, "internal error", std::string("validate: internal error: ") + e.what());
  } catch (...) {
    return plain_outcome(500, "internal error", "validate: internal error");
  }
}

}  // namespace iogate
