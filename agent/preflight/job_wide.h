// A path measured by the pods of one job together (kube/job_barrier.h), as preflight reports it:
// the members and what each read, the sum, and the demand it is judged against. Pure functions,
// so the report, the pod annotation and the aggregate measurement are tested without an API.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/job_barrier.h"
#include "policy/evaluate.h"

namespace iogate {

// The pod annotation that says a verdict came from a job-wide measurement (compact JSON).
inline constexpr const char* kJobMeasurementAnnotation = "iogate.io/job-measurement";

struct JobWideResult {
  std::string job;            // "PyTorchJob bert-7"
  std::string recognised_by;  // job_source_name: "annotation", "jobset", "kubeflow", "job"
  int expected = 0;           // iogate.io/job-pods; 0: not said
  int index = -1;             // ours among the members; -1: we came late and reused the job's result
  std::chrono::milliseconds window{0};
  std::vector<BarrierMember> members;
  JobAggregate aggregate;
};

JobWideResult job_result_of(const JobBarrier& done, const std::string& job, const std::string& recognised_by,
                            int index);

// The job's measurement: `own`'s description of the volume and workload (class, file system,
// block size, how it was read) with the figures replaced by the members' sums (rates) and the
// slowest member's p99, over the window.
Measurement job_measurement(const Measurement& own, const JobAggregate& a, std::chrono::milliseconds window);

// "job" of a result in the iogate.preflight/v1 report: {} for a path not measured as a job.
nlohmann::json job_result_json(const std::optional<JobWideResult>& j);
// What kJobMeasurementAnnotation holds: members, reported, the sums, each member's samples/s,
// the demand's accelerators.
std::string job_annotation(const JobWideResult& j);
// Human lines: the job, each member's figures, the sum and the demand.
std::string render_job_result(const JobWideResult& j);

}  // namespace iogate
