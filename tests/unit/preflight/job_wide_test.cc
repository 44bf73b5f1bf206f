#include <doctest/doctest.h>

#include "preflight/job_wide.h"
#include "preflight/preflight_records.h"

using namespace iogate;
using std::chrono::milliseconds;

namespace {

BarrierMember member(const std::string& pod, int gpus, double samples, bool reported = true) {
  BarrierMember m{"ml/" + pod, "node-1", gpus, reported, {}, ""};
  if (reported) m.figures = {samples, samples * 65536, samples, 2e6};
  return m;
}

JobBarrier done_barrier() {
  JobBarrier b;
  b.job = "ml/Job/train";
  b.expected = 4;
  b.state = BarrierState::kDone;
  b.window = milliseconds(5000);
  b.members = {member("w-0", 1, 40), member("w-1", 1, 38), member("w-2", 1, 41), member("w-3", 1, 0, false)};
  return b;
}

}  // namespace

TEST_CASE("the job's measurement keeps the volume's description and takes the members' sums") {
  Measurement own;
  own.samples = true;
  own.dataset = true;
  own.samples_per_s = 40;
  own.bandwidth_bytes_per_s = 40 * 65536;
  own.p99_latency_ns = 1e6;
  own.device_class = DeviceClass::kNetworkFs;
  own.fs_type = "fuse.sshfs";
  own.ci_half_width_relative = 0.02;
  JobAggregate a = aggregate_job(done_barrier());
  Measurement m = job_measurement(own, a, milliseconds(5000));
  CHECK(m.samples_per_s == doctest::Approx(119));
  CHECK(m.bandwidth_bytes_per_s == doctest::Approx(119 * 65536));
  CHECK(m.p99_latency_ns == doctest::Approx(2e6));
  CHECK(m.measured_s == doctest::Approx(5));
  CHECK(m.device_class == DeviceClass::kNetworkFs);
  CHECK(m.fs_type == "fuse.sshfs");
  CHECK(m.dataset);
  CHECK_FALSE(m.ci_half_width_relative);  // one member's interval is not the sum's
}

TEST_CASE("the report's job object lists every member and says how many reported") {
  JobWideResult j = job_result_of(done_barrier(), "Job train", "job", 1);
  nlohmann::json r = job_result_json(j);
  CHECK(r["name"] == "Job train");
  CHECK(r["recognised_by"] == "job");
  CHECK(r["member_index"] == 1);
  CHECK(r["members"].size() == 4);
  CHECK(r["members"][3]["reported"] == false);
  CHECK(r["members_reported"] == 3);
  CHECK(r["samples_per_s"] == doctest::Approx(119));
  CHECK(r["demand_gpus"] == 4);
  CHECK(r["window_ns"] == 5'000'000'000LL);
  CHECK(job_result_json(std::nullopt) == nlohmann::json::object());

  nlohmann::json a = nlohmann::json::parse(job_annotation(j));
  CHECK(a["members"] == 4);
  CHECK(a["reported"] == 3);
  CHECK(a["samples_per_s"] == 119);
  CHECK(a["per_member"].size() == 4);

  std::string human = render_job_result(j);
  CHECK(human.find("4 pods measured it together for 5s, 3 reported") != std::string::npos);
  CHECK(human.find("ml/w-1 (this pod)") != std::string::npos);
  CHECK(human.find("ml/w-3 on node-1, 1 GPU: no report") != std::string::npos);
  CHECK(human.find("judged for the job's 4 GPUs") != std::string::npos);
}

TEST_CASE("a job-wide result lands on the pod as iogate.io/job-measurement; a lone pod's removes it") {
  PreflightSummary s;
  s.outcome = PodVerdict::kFail;
  PathResult r;
  r.path = "/data";
  r.source = ResultSource::kJob;
  r.job = job_result_of(done_barrier(), "Job train", "job", 0);
  s.results.push_back(r);
  MetadataChanges a = pod_annotations(s);
  REQUIRE(a.count(kJobMeasurementAnnotation));
  REQUIRE(a[kJobMeasurementAnnotation]);
  CHECK(nlohmann::json::parse(*a[kJobMeasurementAnnotation])["members"] == 4);
  CHECK(preflight_report_json(s)["results"][0]["source"] == "job");
  CHECK(preflight_report_json(s)["results"][0]["job"]["members"].size() == 4);

  s.results[0].job.reset();
  s.results[0].source = ResultSource::kProbe;
  a = pod_annotations(s);
  REQUIRE(a.count(kJobMeasurementAnnotation));
  CHECK_FALSE(a[kJobMeasurementAnnotation]);
  CHECK(preflight_report_json(s)["results"][0]["job"] == nlohmann::json::object());
  CHECK(result_source_name(ResultSource::kJobShared) == "job-shared");
}
