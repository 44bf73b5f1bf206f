// Which distributed job a pod belongs to, read from the pod object alone (preflight GETs its own
// pod anyway): the pods of one job that share a volume measure it together (kube/job_barrier.h).
//
// In order, the first that names a job wins:
//   1. the annotation iogate.io/job: NAME, an explicit group (any controller, or none);
//   2. a JobSet's pods: label jobset.sigs.k8s.io/jobset-name (its child Jobs are one job);
//   3. a Kubeflow training job (PyTorchJob, MPIJob, TFJob, ...): label training.kubeflow.org/job-name,
//      the kind from the pod's controller ownerReference where it has one;
//   4. a batch Job: label batch.kubernetes.io/job-name (or the older job-name), or a controller
//      ownerReference of kind Job.
// The annotation iogate.io/job-pods: "N" is how many pods the job has (the pods do not carry
// it otherwise); without it the members are those that arrive within the gather window.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace iogate {

inline constexpr const char* kJobAnnotation = "iogate.io/job";
inline constexpr const char* kJobPodsAnnotation = "iogate.io/job-pods";
// More members than this cannot be listed in one PVC annotation (the API's 256 KiB for all of an
// object's annotations); a larger job_pods is refused.
inline constexpr int kMaxJobPods = 2048;

// How the job was recognised; job_source_name gives "annotation", "jobset", "kubeflow", "job".
enum class JobSource { kAnnotation, kJobSet, kKubeflow, kJob };
std::string_view job_source_name(JobSource s);

struct JobIdentity {
  JobSource source = JobSource::kAnnotation;
  std::string kind;  // "Job", "JobSet", "PyTorchJob", ...; "iogate.io/job" for the annotation
  std::string name;
  int expected_pods = 0;  // iogate.io/job-pods; 0: not said

  // "ns/Kind/name": the same for every member of the job, and only for them.
  std::string key(const std::string& ns) const { return ns + "/" + kind + "/" + name; }
  // "PyTorchJob bert-7" for logs and reports.
  std::string describe() const { return kind + " " + name; }
};

// The job of `pod`, nullopt for a pod of no job. A malformed iogate.io/job-pods (not a whole
// number in [1, kMaxJobPods]) is a usage error naming the annotation.
Result<std::optional<JobIdentity>> job_of_pod(const nlohmann::json& pod);

// Whether preflight measures `job` together with its other members: a job whose size is not
// said to be 1 (a job of one pod probes as a lone pod does).
inline bool measured_as_job(const std::optional<JobIdentity>& job) { return job && job->expected_pods != 1; }

}  // namespace iogate
