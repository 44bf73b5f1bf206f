// /mutate: node affinity for pods that need fast storage, and the preflight initContainer on
// request (admission.h has the contract).
#include <exception>
#include <set>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "policy/demand_label.h"
#include "webhook/admission.h"
#include "webhook/json_patch.h"
#include "webhook/node_affinity.h"
#include "webhook/node_requirements.h"
#include "webhook/pod_review.h"
#include "webhook/preflight_injection.h"
#include "webhook/storage_demand.h"

namespace iogate {
namespace {

// A preferred term's weight in warn mode: the most a preference can weigh.
constexpr int kPreferredWeight = 100;
// What a patch may add to a pod, its own bytes and those its copy operations repeat. etcd stores
// at most 1.5 MiB an object: a pod grown by more could only fail there, after costing the API
// server the copies.
constexpr size_t kMaxPatchBytes = 1536 * 1024;

// "a node that sustains 8 accelerators of rule feed-gpus (2,500 samples/s per accelerator; AU >=
// 0.90 at 20,000 samples/s (2,500/GPU x 8 GPUs))".
std::string accelerator_need_text(const AcceleratorDemand& a) {
  return fmt::format("a node that sustains {} accelerator{} of rule {} ({}; {})", a.accelerators,
                     a.accelerators == 1 ? "" : "s", a.rule, demand_summary(a.demand), a.text);
}

std::string requirements_reason(const StorageDemand& d, const Policy& p, const std::string& requirements) {
  std::set<std::string> floors;
  for (const AcceleratorDemand& a : d.allowed_accelerators()) floors.insert(accelerator_need_text(a));
  for (const ClassDemand& c : d.classes) {
    if (c.allowed && !c.floor_rule.empty() && d.iops_labelled)
      floors.insert("rule " + c.floor_rule + ": " + c.floor_text);
  }
  std::string why;
  for (const std::string& f : floors) why += "; " + f;
  return fmt::format("{} (policy {}, mode {}, {}{})", requirements, p.name.empty() ? p.source : p.name,
                     policy_mode_name(p.mode), d.selected_by, why);
}

// Sets the annotation unless it already says this.
Status add_annotation(const nlohmann::json& pod, const char* key, const std::string& value, nlohmann::json& ops) {
  auto meta = pod.find("metadata");
  if (meta == pod.end() || meta->is_null()) {
    ops.push_back(patch_add(pointer({"metadata"}), {{"annotations", {{key, value}}}}));
    return ok_status();
  }
  if (!meta->is_object()) return usage_error(fmt::format("metadata is a {}, not an object", meta->type_name()));
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || annotations->is_null()) {
    ops.push_back(patch_add(pointer({"metadata", "annotations"}), {{key, value}}));
    return ok_status();
  }
  if (!annotations->is_object()) {
    return usage_error(fmt::format("metadata.annotations is a {}, not an object", annotations->type_name()));
  }
  if (string_at(*annotations, key) != value) ops.push_back(patch_add(pointer({"metadata", "annotations", key}), value));
  return ok_status();
}

AdmissionOutcome mutate_pod(const PodReview& review, const WebhookConfig& config) {
  const Policy& policy = *config.policy;
  const nlohmann::json& pod = review.request.object;

  std::optional<std::string> inject = pod_annotation(review.request, kInjectPreflightAnnotation);
  std::optional<std::string> dataset_path;
  if (inject) dataset_path = preflight_dataset_path(pod, *inject);
  StorageDemand demand = storage_demand(policy, pod, config.extra_gpu_resources, dataset_path);

  AdmissionResponse response;
  response.warnings = review.warnings;
  response.patch = nlohmann::json::array();
  size_t copied_bytes = 0;  // what the patch's copy operations repeat of the pod
  std::vector<std::string> done;
  if (!demand.selected) {
    done.push_back("no GPUs and no rule selecting its labels");
  } else if (policy.mode == PolicyMode::kOff) {
    done.push_back(demand.selected_by + ", policy mode off: no affinity");
  } else {
    Result<std::vector<nlohmann::json>> alternatives = node_requirements(demand);
    if (!alternatives) {
      if (policy.mode == PolicyMode::kEnforce) return refusal(review, 403, alternatives.error().message);
      response.warnings.push_back(fmt::format("iogate: {}: {}", kWouldBlock, alternatives.error().message));
      done.push_back(fmt::format("no class allowed (mode warn, {})", kWouldBlock));
    } else if (alternatives->empty()) {
      done.push_back(demand.selected_by + ", nothing the node labels can express");
    } else {
      bool enforce = policy.mode == PolicyMode::kEnforce;
      size_t before = response.patch.size();
      Status s = ok_status();
      if (enforce) {
        Result<size_t> copied = add_required_affinity(pod, *alternatives, response.patch);
        if (copied) copied_bytes = *copied;
        else s = copied.error();
      } else {
        s = add_preferred_affinity(pod, *alternatives, kPreferredWeight, response.patch);
      }
      // A judged pod: refused with the reason, not admitted without what the policy demands (in warn
      // mode only a mistyped affinity gets here, which the API server would refuse as well).
      if (!s) return refusal(review, 400, "the pod's node affinity cannot be extended: " + s.error().message);
      std::string text = requirements_text(*alternatives);
      done.push_back(fmt::format("{}, {} affinity {}{}", demand.selected_by, enforce ? "required" : "preferred", text,
                                 response.patch.size() > before ? " added" : " already there"));
      // What the pod waits for if it stays Pending: the scheduler's message says only "didn't match
      // Pod's node affinity", so the demand is said where kubectl apply shows it.
      for (const AcceleratorDemand& a : demand.allowed_accelerators()) {
        response.warnings.push_back(fmt::format("iogate: {} {}: {} Gt {}{}", enforce ? "needs" : "prefers",
                                                accelerator_need_text(a), accelerators_label(a.rule),
                                                a.accelerators - 1, enforce ? "" : " (enforce mode would require it)"));
      }
      Status a =
          add_annotation(pod, kRequirementsAnnotation, requirements_reason(demand, policy, text), response.patch);
      if (!a) return refusal(review, 400, "the pod's annotations cannot be extended: " + a.error().message);
    }
  }
  if (inject) {
    size_t before = response.patch.size();
    Status s = add_preflight_container(pod, *inject, config, response.patch);
    if (!s) return refusal(review, 400, s.error().message);
    done.push_back(response.patch.size() > before
                       ? fmt::format("preflight injected for volume {} at {}", *inject, dataset_path.value_or(""))
                       : "preflight already there");
  }
  if (size_t bytes = json_text_bytes(response.patch) + copied_bytes; bytes > kMaxPatchBytes) {
    std::string copies =
        copied_bytes == 0
            ? ""
            : fmt::format(" ({} of them its own nodeSelectorTerms, repeated for each alternative after the first)",
                          copied_bytes);
    return refusal(review, 400,
                   fmt::format("the patch would add {} bytes to the pod{}, more than a pod may grow by ({})", bytes,
                               copies, kMaxPatchBytes));
  }
  std::string summary;
  for (const std::string& d : done) summary += "; " + d;
  size_t ops = response.patch.size();
  return review_outcome(
      review.request.uid, response,
      fmt::format("{}: allowed, {}{}", review.subject,
                  ops == 0 ? std::string("no patch") : fmt::format("{} patch operation{}", ops, ops == 1 ? "" : "s"),
                  summary));
}

AdmissionOutcome mutate(std::string_view body, const WebhookConfig& config) {
  PodReview review = review_pod("mutate", body, config, {"CREATE"});
  AdmissionOutcome o = review.answer ? std::move(*review.answer) : mutate_pod(review, config);
  o.operation = review.request.operation;
  return o;
}

}  // namespace

AdmissionOutcome handle_mutate(std::string_view body, const WebhookConfig& config) {
  try {
    return mutate(body, config);
  } catch (const std::exception& e) {
    return plain_outcome(500, "internal error", std::string("mutate: internal error: ") + e.what());
  } catch (...) {
    return plain_outcome(500, "internal error", "mutate: internal error");
  }
}

}  // namespace iogate
