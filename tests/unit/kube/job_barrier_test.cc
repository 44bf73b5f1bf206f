#include <doctest/doctest.h>

#include "kube/job_barrier.h"

using namespace iogate;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

namespace {

const system_clock::time_point kT0 = system_clock::from_time_t(1780000000);

BarrierMember member(const std::string& pod, int gpus) { return {"ml/" + pod, "node-" + pod, gpus, false, {}, ""}; }

BarrierMember reported(const std::string& pod, int gpus, double samples, double bytes) {
  BarrierMember m = member(pod, gpus);
  m.reported = true;
  m.figures = {samples, bytes, samples * 2, 1e6 * gpus};
  return m;
}

JobBarrier gathering(int expected, std::vector<BarrierMember> members) {
  JobBarrier b;
  b.job = "ml/Job/train";
  b.workload = "dataset";
  b.expected = expected;
  b.state = BarrierState::kGathering;
  b.opened = kT0;
  b.gather = milliseconds(20000);
  b.expires = kT0 + seconds(120);
  b.members = std::move(members);
  return b;
}

nlohmann::json pvc_with(const std::string& key, const nlohmann::json& value) {
  return {{"metadata", {{"name", "imagenet"}, {"annotations", {{key, value.dump()}}}}}};
}

}  // namespace

TEST_CASE("the barrier's annotation is named by a hash of the job's key, within an annotation name's 63") {
  std::string a = job_probe_annotation("ml/Job/train");
  CHECK(a.rfind(kJobProbeAnnotationPrefix, 0) == 0);
  CHECK(a.size() == std::string(kJobProbeAnnotationPrefix).size() + 16);
  CHECK(a == job_probe_annotation("ml/Job/train"));
  CHECK(a != job_probe_annotation("ml/Job/train2"));
  CHECK(a != job_probe_annotation("ml2/Job/train"));
}

TEST_CASE("a barrier reads back as written, in each state") {
  JobBarrier b = gathering(4, {member("w-0", 2), member("w-1", 2)});
  const std::string key = job_probe_annotation(b.job);
  auto back = job_barrier_on(pvc_with(key, job_barrier_to_json(b)), key);
  REQUIRE(back);
  CHECK(*back == b);

  b.state = BarrierState::kProbing;
  b.closed = kT0 + seconds(3);
  b.window = milliseconds(5000);
  b.seed = 12345;
  back = job_barrier_on(pvc_with(key, job_barrier_to_json(b)), key);
  REQUIRE(back);
  CHECK(*back == b);

  b.state = BarrierState::kDone;
  b.members = {reported("w-0", 2, 100, 6.4e6), reported("w-1", 2, 110, 7.0e6)};
  b.members[1].error = "";
  b.finished = kT0 + seconds(12);
  b.result = {{"samples_per_s", 210}};
  back = job_barrier_on(pvc_with(key, job_barrier_to_json(b)), key);
  REQUIRE(back);
  CHECK(*back == b);
}

TEST_CASE("a malformed barrier reads as none: the next pod starts a new one") {
  const std::string key = job_probe_annotation("ml/Job/train");
  CHECK_FALSE(job_barrier_on(pvc_with("other", nlohmann::json::object()), key));
  nlohmann::json j = job_barrier_to_json(gathering(2, {member("w-0", 1)}));
  for (const char* field : {"job", "state", "opened", "expires", "members"}) {
    nlohmann::json broken = j;
    broken.erase(field);
    CHECK_FALSE(job_barrier_on(pvc_with(key, broken), key));
  }
  nlohmann::json unknown = j;
  unknown["state"] = "resting";
  CHECK_FALSE(job_barrier_on(pvc_with(key, unknown), key));
  // Probing without its window, done without its result: unusable.
  nlohmann::json probing = j;
  probing["state"] = "probing";
  CHECK_FALSE(job_barrier_on(pvc_with(key, probing), key));
  nlohmann::json text = {{"metadata", {{"annotations", {{key, "{not json"}}}}}};
  CHECK_FALSE(job_barrier_on(text, key));
}

TEST_CASE("the gathering ends when the expected members are in, or when its window passes") {
  JobBarrier b = gathering(3, {member("w-0", 1), member("w-1", 1)});
  CHECK_FALSE(barrier_full(b));
  CHECK_FALSE(gathering_over(b, kT0 + seconds(5), seconds(5)));
  b.members.push_back(member("w-2", 1));
  CHECK(barrier_full(b));
  // By the opener's clock...
  CHECK(gathering_over(b, kT0 + seconds(20), seconds(1)));
  // ...or by ours, where the opener's clock runs behind ours is no help to it.
  CHECK(gathering_over(b, kT0 - seconds(30), seconds(20)));
  CHECK_FALSE(gathering_over(b, kT0 - seconds(30), seconds(19)));
  // Without an expected count only the window ends it.
  JobBarrier open = gathering(0, {member("w-0", 1), member("w-1", 1), member("w-2", 1)});
  CHECK_FALSE(barrier_full(open));
  CHECK(member_index(b, "ml/w-2") == 2);
  CHECK(member_index(b, "ml/w-9") == -1);
}

TEST_CASE("a barrier left unfinished past its expiry and the skew allowance is abandoned") {
  JobBarrier b = gathering(2, {member("w-0", 1)});
  CHECK_FALSE(barrier_abandoned(b, b.expires));
  CHECK_FALSE(barrier_abandoned(b, b.expires + kJobBarrierSkewAllowance));
  CHECK(barrier_abandoned(b, b.expires + kJobBarrierSkewAllowance + seconds(1)));
  b.state = BarrierState::kDone;
  CHECK_FALSE(barrier_abandoned(b, b.expires + std::chrono::hours(5)));
}

TEST_CASE("a done job result is reused for the same workload and size within the TTL only") {
  JobBarrier b = gathering(4, {reported("w-0", 1, 100, 1e6)});
  b.state = BarrierState::kDone;
  b.finished = kT0;
  const auto ttl = std::chrono::hours(1);
  CHECK(job_result_reusable(b, "dataset", 4, ttl, kT0 + seconds(60)));
  CHECK_FALSE(job_result_reusable(b, "randread/4k/qd32x1", 4, ttl, kT0 + seconds(60)));
  CHECK_FALSE(job_result_reusable(b, "dataset", 8, ttl, kT0 + seconds(60)));
  CHECK_FALSE(job_result_reusable(b, "dataset", 4, ttl, kT0 + std::chrono::hours(2)));
  CHECK_FALSE(job_result_reusable(b, "dataset", 4, std::chrono::nanoseconds::zero(), kT0 + seconds(1)));
  CHECK_FALSE(job_result_reusable(b, "dataset", 4, ttl, kT0 - std::chrono::minutes(5)));  // from the future
  b.state = BarrierState::kProbing;
  CHECK_FALSE(job_result_reusable(b, "dataset", 4, ttl, kT0 + seconds(60)));
}

TEST_CASE("the aggregate sums what the members read and counts the whole job's accelerators") {
  JobBarrier b = gathering(4, {reported("w-0", 2, 100, 6.4e6), reported("w-1", 2, 120, 7.7e6),
                               reported("w-2", 2, 90, 5.8e6), reported("w-3", 2, 95, 6.1e6)});
  JobAggregate a = aggregate_job(b);
  CHECK(a.members == 4);
  CHECK(a.reported == 4);
  CHECK(a.missing == 0);
  CHECK(a.sum.samples_per_s == doctest::Approx(405));
  CHECK(a.sum.bytes_per_s == doctest::Approx(26e6));
  CHECK(a.sum.iops == doctest::Approx(810));
  CHECK(a.sum.p99_latency_ns == doctest::Approx(2e6));  // the slowest member's
  CHECK(a.demand_gpus == 8);
  CHECK(a.demand_from == "4 members' GPUs");
}

TEST_CASE("a member that died mid-window is counted in the demand, not in the sum") {
  JobBarrier b = gathering(3, {reported("w-0", 1, 100, 1e6), member("w-1", 1), reported("w-2", 1, 80, 1e6)});
  b.members.push_back(reported("w-3", 1, 0, 0));
  b.members[3].error = "deadline reached";
  b.expected = 4;
  JobAggregate a = aggregate_job(b);
  CHECK(a.reported == 2);
  CHECK(a.failed == 1);
  CHECK(a.sum.samples_per_s == doctest::Approx(180));
  CHECK(a.demand_gpus == 4);
  CHECK_FALSE(all_reported(b));
}

TEST_CASE("members that never arrived count as many GPUs as the largest member has") {
  JobBarrier b = gathering(5, {reported("w-0", 4, 100, 1e6), reported("w-1", 2, 100, 1e6)});
  JobAggregate a = aggregate_job(b);
  CHECK(a.missing == 3);
  CHECK(a.demand_gpus == 6 + 3 * 4);
  CHECK(a.demand_from == "2 members' GPUs (6) + 3 missing × 4");
  // A member without GPUs is judged as one accelerator, as a lone pod's demand is.
  JobBarrier cpu = gathering(0, {reported("w-0", 0, 10, 1), reported("w-1", 0, 10, 1)});
  CHECK(aggregate_job(cpu).demand_gpus == 2);
}
