#include <doctest/doctest.h>

#include "kube/job_identity.h"

using namespace iogate;

namespace {

nlohmann::json pod(nlohmann::json labels, nlohmann::json annotations = nlohmann::json::object(),
                   nlohmann::json owners = nlohmann::json::array()) {
  return {
      {"metadata", {{"name", "w-0"}, {"labels", labels}, {"annotations", annotations}, {"ownerReferences", owners}}}};
}

nlohmann::json owner(const std::string& kind, const std::string& name, bool controller = true) {
  return {{"apiVersion", "x/v1"}, {"kind", kind}, {"name", name}, {"uid", "u"}, {"controller", controller}};
}

JobIdentity job_of(const nlohmann::json& p) {
  auto j = job_of_pod(p);
  REQUIRE(j.ok());
  REQUIRE(j->has_value());
  return **j;
}

}  // namespace

TEST_CASE("a pod of no job has no job identity: it probes as a lone pod") {
  auto j = job_of_pod(pod({{"app", "notebook"}}, {}, nlohmann::json::array({owner("ReplicaSet", "nb-5d8")})));
  REQUIRE(j.ok());
  CHECK_FALSE(j->has_value());
  CHECK_FALSE(measured_as_job(*j));
  // A job-name label without a Job owner (someone's own convention) is not a Job.
  auto k = job_of_pod(pod({{"job-name", "mine"}}));
  REQUIRE(k.ok());
  CHECK_FALSE(k->has_value());
}

TEST_CASE("a batch Job's pods: its label, the older label with a Job owner, or the owner alone") {
  JobIdentity a =
      job_of(pod({{"batch.kubernetes.io/job-name", "train"}}, {}, nlohmann::json::array({owner("Job", "train")})));
  CHECK(a.source == JobSource::kJob);
  CHECK(a.kind == "Job");
  CHECK(a.name == "train");
  CHECK(a.expected_pods == 0);
  CHECK(a.key("ml") == "ml/Job/train");
  CHECK(job_of(pod({{"job-name", "old"}}, {}, nlohmann::json::array({owner("Job", "old")}))).name == "old");
  CHECK(job_of(pod({}, {}, nlohmann::json::array({owner("Job", "bare")}))).name == "bare");
  // An owner that is not the controller does not make the pod a Job's.
  auto j = job_of_pod(pod({}, {}, nlohmann::json::array({owner("Job", "x", false)})));
  REQUIRE(j.ok());
  CHECK_FALSE(j->has_value());
}

TEST_CASE("a JobSet is one job across its child Jobs") {
  JobIdentity j = job_of(pod({{"jobset.sigs.k8s.io/jobset-name", "llm"}, {"batch.kubernetes.io/job-name", "llm-w-0"}},
                             {}, nlohmann::json::array({owner("Job", "llm-w-0")})));
  CHECK(j.source == JobSource::kJobSet);
  CHECK(j.key("ml") == "ml/JobSet/llm");
  // Its other child Job's pods meet on the same key.
  CHECK(
      job_of(pod({{"jobset.sigs.k8s.io/jobset-name", "llm"}, {"batch.kubernetes.io/job-name", "llm-w-1"}})).key("ml") ==
      j.key("ml"));
}

TEST_CASE("Kubeflow training jobs: the kind from the operator's owner reference") {
  JobIdentity p =
      job_of(pod({{"training.kubeflow.org/job-name", "bert"}, {"training.kubeflow.org/replica-type", "worker"}}, {},
                 nlohmann::json::array({owner("PyTorchJob", "bert")})));
  CHECK(p.source == JobSource::kKubeflow);
  CHECK(p.describe() == "PyTorchJob bert");
  CHECK(job_of(pod({{"training.kubeflow.org/job-name", "hvd"}}, {}, nlohmann::json::array({owner("MPIJob", "hvd")})))
            .key("ml") == "ml/MPIJob/hvd");
  CHECK(job_of(pod({{"training.kubeflow.org/job-name", "bare"}})).kind == "KubeflowJob");
}

TEST_CASE("the annotation names the job, wins over labels, and iogate.io/job-pods its size") {
  JobIdentity j = job_of(
      pod({{"batch.kubernetes.io/job-name", "train"}}, {{kJobAnnotation, "sweep-3"}, {kJobPodsAnnotation, "4"}}));
  CHECK(j.source == JobSource::kAnnotation);
  CHECK(j.name == "sweep-3");
  CHECK(j.expected_pods == 4);
  CHECK(measured_as_job(j));
  // A job of one pod keeps the lone pod's behaviour.
  CHECK_FALSE(measured_as_job(job_of(pod({{"batch.kubernetes.io/job-name", "one"}}, {{kJobPodsAnnotation, "1"}}))));
}

TEST_CASE("a malformed iogate.io/job-pods is a usage error naming the annotation") {
  for (const char* bad : {"0", "-2", "four", "4.0", "", " 4", "2049"}) {
    auto j = job_of_pod(pod({{"batch.kubernetes.io/job-name", "t"}}, {{kJobPodsAnnotation, bad}}));
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().kind == ErrorKind::kUsage);
    CHECK(j.error().message.find("iogate.io/job-pods") != std::string::npos);
  }
}
