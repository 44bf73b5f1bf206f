// A job's barrier on its PVC against the test API server over real TLS: members in threads of
// their own (each its own client, as each pod is its own process) meet, probe, report, and all
// get the one done record; a lone arrival gives way; a member that never reports holds no one.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "kube/job_barrier.h"
#include "test_cluster.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::TestCluster;

const PvcRef kPvc{"ml", "imagenet"};
const std::string kKey = "ml/Job/train";

json pvc_object() {
  return {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolumeClaim"},
      {"metadata", {{"name", kPvc.name}, {"namespace", kPvc.ns}, {"annotations", {{"example.com/backup", "daily"}}}}}};
}

JobBarrierRequest request_for(const std::string& pod, int expected, milliseconds gather) {
  JobBarrierRequest r;
  r.pvc = kPvc;
  r.annotation = job_probe_annotation(kKey);
  r.fresh.job = kKey;
  r.fresh.workload = "dataset/4w";
  r.fresh.expected = expected;
  r.fresh.gather = gather;
  r.life = seconds(60);
  r.self = {pod, "node-" + pod, 1, false, {}, ""};
  r.window = milliseconds(2000);
  r.ttl = std::chrono::hours(1);
  r.wait_until = steady_clock::now() + seconds(20);
  r.poll_interval = milliseconds(100);
  return r;
}

json result_of(const JobBarrier& b) { return {{"samples_per_s", aggregate_job(b).sum.samples_per_s}}; }

}  // namespace

TEST_CASE("three members meet, probe with one window and seed, report, and all judge one done record") {
  TestCluster c;
  c.seed(pvc_object());
  const int n = 3;
  std::vector<JoinDecision> joined(n);
  std::vector<std::optional<JobBarrier>> done(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> members;
  for (int i = 0; i < n; ++i) {
    members.emplace_back([&, i] {
      ApiClient api(c.config, testing::fast_retry());
      JobBarrierRequest req = request_for("ml/w-" + std::to_string(i), n, seconds(10));
      auto j = join_job_barrier(api, req);
      if (!j.ok()) {
        errors[i] = j.error().summary();
        return;
      }
      joined[i] = *j;
      BarrierMember self = req.self;
      self.figures = {10.0 * (i + 1), 1e6, 10.0 * (i + 1), 1e6};
      auto d = report_and_finish(api, req, self, steady_clock::now() + seconds(10), result_of);
      if (!d.ok()) {
        errors[i] = d.error().summary();
        return;
      }
      done[i] = *d;
    });
  }
  for (auto& t : members) t.join();
  for (int i = 0; i < n; ++i) {
    INFO("member " << i << ": " << errors[i]);
    REQUIRE(errors[i].empty());
    CHECK(joined[i].action == JoinAction::kProbe);
    CHECK(joined[i].barrier.members.size() == 3);
    CHECK(joined[i].barrier.window == milliseconds(2000));
    CHECK(joined[i].barrier.seed == joined[0].barrier.seed);
    REQUIRE(done[i]);
    CHECK(done[i]->state == BarrierState::kDone);
    CHECK(*done[i] == *done[0]);  // one record for all
  }
  // Each member its own shard index.
  std::vector<int> indexes;
  for (const auto& j : joined) indexes.push_back(j.index);
  std::sort(indexes.begin(), indexes.end());
  CHECK(indexes == std::vector<int>{0, 1, 2});
  CHECK(all_reported(*done[0]));
  CHECK(done[0]->result["samples_per_s"] == doctest::Approx(60));
  auto stored = job_barrier_on(c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name), job_probe_annotation(kKey));
  REQUIRE(stored);
  CHECK(*stored == *done[0]);
  // Another controller's annotation survives every write.
  CHECK(c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name)["metadata"]["annotations"]["example.com/backup"] ==
        "daily");

  // A pod of the job that comes later reuses the record.
  {
    ApiClient api(c.config, testing::fast_retry());
    auto late = join_job_barrier(api, request_for("ml/w-9", n, seconds(10)));
    REQUIRE(late.ok());
    CHECK(late->action == JoinAction::kReuse);
    CHECK(late->index == -1);
    CHECK(late->barrier == *done[0]);
    // Not for a job of another size.
    auto other = join_job_barrier(api, request_for("ml/w-9", 8, milliseconds(300)));
    REQUIRE(other.ok());
    CHECK(other->action != JoinAction::kReuse);
  }
}

TEST_CASE("alone when the window passes, with no expected count: the record goes, the pod probes as a lone pod") {
  TestCluster c;
  c.seed(pvc_object());
  ApiClient api(c.config, testing::fast_retry());
  const auto t0 = steady_clock::now();
  auto j = join_job_barrier(api, request_for("ml/w-0", 0, milliseconds(400)));
  REQUIRE(j.ok());
  CHECK(j->action == JoinAction::kAlone);
  CHECK(steady_clock::now() - t0 >= milliseconds(400));
  CHECK_FALSE(job_barrier_on(c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name), job_probe_annotation(kKey)));
}

TEST_CASE("a member that never reports holds the others only until their report deadline") {
  TestCluster c;
  c.seed(pvc_object());
  // Both meet; only one reports.
  std::optional<JoinDecision> second;
  std::thread other([&] {
    ApiClient api(c.config, testing::fast_retry());
    auto j = join_job_barrier(api, request_for("ml/w-1", 2, seconds(10)));
    if (j.ok()) second = *j;
  });
  ApiClient api(c.config, testing::fast_retry());
  JobBarrierRequest req = request_for("ml/w-0", 2, seconds(10));
  auto j = join_job_barrier(api, req);
  other.join();
  REQUIRE(j.ok());
  REQUIRE(second);
  CHECK(j->action == JoinAction::kProbe);
  BarrierMember self = req.self;
  self.figures = {50, 1e6, 50, 1e6};
  const auto t0 = steady_clock::now();
  auto d = report_and_finish(api, req, self, steady_clock::now() + milliseconds(600), result_of);
  REQUIRE(d.ok());
  CHECK(steady_clock::now() - t0 >= milliseconds(600));
  CHECK(d->state == BarrierState::kDone);
  JobAggregate a = aggregate_job(*d);
  CHECK(a.members == 2);
  CHECK(a.reported == 1);
  CHECK(a.demand_gpus == 2);
  CHECK(d->result["samples_per_s"] == doctest::Approx(50));
}

}  // namespace iogate
