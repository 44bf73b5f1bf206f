// A job's barrier on its PVC, one member's client against a scripted API: the writes it makes
// (open, join, close, report, finish, remove; each on the resourceVersion it read) and what it
// makes of the barrier as it reads it, the other members played by the test between its reads.
// The members as processes of their own meeting on the real API server, one of them killed
// mid-window, are e2e.jobwide's.
#include <doctest/doctest.h>

#include <functional>
#include <mutex>

#include "kube/job_barrier.h"
#include "scripted_api.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

const PvcRef kPvc{"ml", "imagenet"};
const std::string kKey = "ml/Job/train";
const std::string kPath = "/api/v1/namespaces/ml/persistentvolumeclaims/imagenet";

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
  r.wait_until = steady_clock::now() + seconds(10);
  r.poll_interval = milliseconds(50);
  return r;
}

// The PVC as the test holds it: a read answers it, after `before_read` (the other members' writes,
// played by the test); our write of the annotation becomes what later reads show. Each write must
// carry the resourceVersion of the version it was computed from: the last one read.
struct HeldPvc {
  std::mutex mu;
  json pvc = {{"metadata",
               {{"name", kPvc.name},
                {"namespace", kPvc.ns},
                {"resourceVersion", "1"},
                {"annotations", {{"example.com/backup", "daily"}}}}}};
  int rv = 1;
  std::function<void(HeldPvc&)> before_read;
  std::vector<json> written;  // each write's barrier (null: removed)

  std::optional<JobBarrier> barrier() const { return job_barrier_on(pvc, job_probe_annotation(kKey)); }
  // Another member's write.
  void set(const JobBarrier& b) {
    pvc["metadata"]["annotations"][job_probe_annotation(kKey)] = job_barrier_to_json(b).dump();
    pvc["metadata"]["resourceVersion"] = std::to_string(++rv);
  }
  TransportResult answer(const HttpRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(r.path == kPath);
    if (r.method == "GET") {
      if (before_read) before_read(*this);
      return testing::json_answer(pvc);
    }
    REQUIRE(r.method == "PATCH");
    json body = testing::body_of(r);
    CHECK(body["metadata"]["resourceVersion"] == pvc["metadata"]["resourceVersion"]);
    const json& value = body["metadata"]["annotations"][job_probe_annotation(kKey)];
    CHECK(body["metadata"]["annotations"].size() == 1);  // the barrier's annotation only
    written.push_back(value.is_null() ? value : json::parse(value.get<std::string>()));
    if (value.is_null()) pvc["metadata"]["annotations"].erase(job_probe_annotation(kKey));
    else pvc["metadata"]["annotations"][job_probe_annotation(kKey)] = value;
    pvc["metadata"]["resourceVersion"] = std::to_string(++rv);
    return testing::json_answer(pvc);
  }
};

struct Harness {
  HeldPvc held;
  testing::ScriptedClient s;
  Harness() {
    s.api->otherwise([this](const HttpRequest& r) { return held.answer(r); });
  }
};

json result_of(const JobBarrier& b) { return {{"samples_per_s", aggregate_job(b).sum.samples_per_s}}; }

TEST_CASE("alone when the window passes, with no expected count: our record goes, the pod probes as a lone pod") {
  Harness h;
  const auto t0 = steady_clock::now();
  auto j = join_job_barrier(*h.s.client, request_for("ml/w-0", 0, milliseconds(300)));
  REQUIRE(j.ok());
  CHECK(j->action == JoinAction::kAlone);
  CHECK(steady_clock::now() - t0 >= milliseconds(300));
  REQUIRE(h.held.written.size() == 2);  // opened, then removed
  CHECK(h.held.written[0]["state"] == "gathering");
  CHECK(h.held.written[1].is_null());
  CHECK_FALSE(h.held.barrier());
  CHECK(h.held.pvc["metadata"]["annotations"]["example.com/backup"] == "daily");
}

TEST_CASE("two members: we open, the other joins, we close with one window and seed, report, and finish") {
  Harness h;
  // The other member joins once our barrier is there.
  h.held.before_read = [](HeldPvc& p) {
    auto b = p.barrier();
    if (b && b->state == BarrierState::kGathering && b->members.size() == 1) {
      b->members.push_back({"ml/w-1", "node-ml/w-1", 2, false, {}, ""});
      p.set(*b);
    }
  };
  JobBarrierRequest req = request_for("ml/w-0", 2, seconds(10));
  auto j = join_job_barrier(*h.s.client, req);
  REQUIRE(j.ok());
  CHECK(j->action == JoinAction::kProbe);
  CHECK(j->index == 0);
  CHECK(j->barrier.members.size() == 2);
  CHECK(j->barrier.window == milliseconds(2000));
  REQUIRE(h.held.written.size() == 2);  // opened; closed when full, without waiting for the window
  CHECK(h.held.written[1]["state"] == "probing");
  CHECK(j->barrier == *h.held.barrier());

  // Reporting: ours written; the other's arrives; the finish carries both and the result.
  h.held.before_read = [](HeldPvc& p) {
    auto b = p.barrier();
    if (b && b->state == BarrierState::kProbing && b->members[0].reported && !b->members[1].reported) {
      b->members[1].reported = true;
      b->members[1].figures = {20, 1e6, 20, 1e6};
      p.set(*b);
    }
  };
  BarrierMember self = req.self;
  self.figures = {10, 1e6, 10, 1e6};
  auto d = report_and_finish(*h.s.client, req, self, steady_clock::now() + seconds(5), result_of);
  REQUIRE(d.ok());
  CHECK(d->state == BarrierState::kDone);
  CHECK(all_reported(*d));
  CHECK(d->result["samples_per_s"] == doctest::Approx(30));
  REQUIRE(h.held.written.size() == 4);  // report, finish
  CHECK(h.held.written[2]["state"] == "probing");
  CHECK(*h.held.barrier() == *d);
  CHECK(h.held.pvc["metadata"]["annotations"]["example.com/backup"] == "daily");

  // A pod of the job that comes later reuses the record, writing nothing; one of a job of another
  // size does not.
  auto late = join_job_barrier(*h.s.client, request_for("ml/w-9", 2, seconds(10)));
  REQUIRE(late.ok());
  CHECK(late->action == JoinAction::kReuse);
  CHECK(late->index == -1);
  CHECK(late->barrier == *d);
  CHECK(h.held.written.size() == 4);
}

TEST_CASE("a member that never reports holds us only until our report deadline") {
  Harness h;
  JobBarrier probing;
  probing.job = kKey;
  probing.workload = "dataset/4w";
  probing.expected = 2;
  probing.state = BarrierState::kProbing;
  probing.opened = std::chrono::system_clock::now();
  probing.gather = seconds(10);
  probing.expires = probing.opened + seconds(60);
  probing.closed = probing.opened;
  probing.window = milliseconds(2000);
  probing.members = {{"ml/w-0", "node-ml/w-0", 1, false, {}, ""}, {"ml/w-1", "node-ml/w-1", 1, false, {}, ""}};
  h.held.set(probing);
  JobBarrierRequest req = request_for("ml/w-0", 2, seconds(10));
  BarrierMember self = req.self;
  self.figures = {50, 1e6, 50, 1e6};
  const auto t0 = steady_clock::now();
  auto d = report_and_finish(*h.s.client, req, self, steady_clock::now() + milliseconds(600), result_of);
  REQUIRE(d.ok());
  CHECK(steady_clock::now() - t0 >= milliseconds(600));
  CHECK(d->state == BarrierState::kDone);
  JobAggregate a = aggregate_job(*d);
  CHECK(a.members == 2);
  CHECK(a.reported == 1);
  CHECK(a.demand_gpus == 2);
  CHECK(d->result["samples_per_s"] == doctest::Approx(50));
  CHECK(h.held.written.size() == 2);  // our report, the finish
}

TEST_CASE("a 409 on a write reads the barrier again and redoes the step") {
  Harness h;
  testing::ScriptedClient s;
  s.api->expect("GET " + kPath, testing::json_answer(h.held.pvc));
  s.api->expect("PATCH " + kPath, testing::conflict_answer());
  s.api->otherwise([&](const HttpRequest& r) { return h.held.answer(r); });
  auto j = join_job_barrier(*s.client, request_for("ml/w-0", 0, milliseconds(200)));
  REQUIRE(j.ok());
  CHECK(j->action == JoinAction::kAlone);
  CHECK(s.api->lines()[2] == "GET " + kPath);  // read again at once
  CHECK(h.held.written.size() == 2);
}

}  // namespace
}  // namespace iogate
