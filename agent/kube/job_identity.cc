#include "kube/job_identity.h"

#include <charconv>

#include <fmt/format.h>

#include "base/json_fields.h"
#include "base/quote.h"

namespace iogate {
namespace {

// The kind of the pod's controller ownerReference (its name into `name`), "" without one.
std::string controller_kind(const nlohmann::json& metadata, std::string& name) {
  for (const auto& ref : array_at(metadata, "ownerReferences")) {
    auto controller = ref.find("controller");
    if (controller == ref.end() || !controller->is_boolean() || !controller->get<bool>()) continue;
    name = string_at(ref, "name");
    return string_at(ref, "kind");
  }
  return "";
}

}  // namespace

std::string_view job_source_name(JobSource s) {
  switch (s) {
    case JobSource::kAnnotation: return "annotation";
    case JobSource::kJobSet: return "jobset";
    case JobSource::kKubeflow: return "kubeflow";
    case JobSource::kJob: return "job";
  }
  return "annotation";
}

Result<std::optional<JobIdentity>> job_of_pod(const nlohmann::json& pod) {
  const nlohmann::json& metadata = object_at(pod, "metadata");
  const nlohmann::json& annotations = object_at(metadata, "annotations");
  const nlohmann::json& labels = object_at(metadata, "labels");
  std::string owner_name;
  const std::string owner_kind = controller_kind(metadata, owner_name);

  JobIdentity job;
  if (std::string v = string_at(annotations, kJobAnnotation); !v.empty()) {
    job = {JobSource::kAnnotation, kJobAnnotation, v};
  } else if (std::string v = string_at(labels, "jobset.sigs.k8s.io/jobset-name"); !v.empty()) {
    job = {JobSource::kJobSet, "JobSet", v};
  } else if (std::string v = string_at(labels, "training.kubeflow.org/job-name"); !v.empty()) {
    // The operator owns its pods directly; without that reference the kind is unknown, not guessed.
    std::string kind = owner_kind.empty() || owner_kind == "Job" ? "KubeflowJob" : owner_kind;
    job = {JobSource::kKubeflow, kind, v};
  } else if (std::string v = string_at(labels, "batch.kubernetes.io/job-name"); !v.empty()) {
    job = {JobSource::kJob, "Job", v};
  } else if (std::string v = string_at(labels, "job-name"); !v.empty() && owner_kind == "Job") {
    job = {JobSource::kJob, "Job", v};  // Kubernetes before 1.27 set only job-name
  } else if (owner_kind == "Job" && !owner_name.empty()) {
    job = {JobSource::kJob, "Job", owner_name};
  } else {
    return std::optional<JobIdentity>();
  }

  auto pods = annotations.find(kJobPodsAnnotation);
  if (pods != annotations.end()) {
    const std::string text = pods->is_string() ? pods->get<std::string>() : pods->dump();
    int n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxJobPods) {
      return usage_error(fmt::format("pod annotation {}: want the job's pod count, a whole number in [1, {}], got {}",
                                     kJobPodsAnnotation, kMaxJobPods, quote_value(text)));
    }
    job.expected_pods = n;
  }
  return std::optional<JobIdentity>(std::move(job));
}

}  // namespace iogate
