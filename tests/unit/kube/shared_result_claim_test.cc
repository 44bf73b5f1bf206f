// Sharing a result through a PVC against a scripted API, one pod's client at a time: what it
// writes (the lock with the read's resourceVersion, its release, the result) and what it makes of
// what it reads (a free PVC, a lost race, a lock renewed or not, an orphan, a lock taken over from
// its holder) with leases of a second. Many pods racing on the real API server's resourceVersion
// check are e2e.preflight_cases' (four pods, one probes; 64 pods, the prober killed, one takeover)
// and e2e.api_faults' (a lock PATCH dropped after the write); the watch is watch_waiter_test.cc's.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "kube/operations.h"
#include "kube/shared_result.h"
#include "scripted_api.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;
using testing::json_answer;
using testing::ScriptedClient;

const PvcRef kPvc{"ml", "imagenet"};
const std::string kPath = "/api/v1/namespaces/ml/persistentvolumeclaims/imagenet";

json pvc(int rv, const std::map<std::string, std::string>& annotations = {}) {
  json a = {{"example.com/backup", "daily"}};
  for (const auto& [k, v] : annotations) a[k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", kPvc.name}, {"namespace", kPvc.ns}, {"resourceVersion", std::to_string(rv)}, {"annotations", a}}}};
}

std::string lock_text(const std::string& pod, system_clock::time_point renewed, seconds lease = seconds(1)) {
  return probe_lock_to_json(ProbeLock{pod, "node-x", renewed, lease}).dump();
}

std::string result_text(const std::string& pod, system_clock::time_point at = system_clock::now()) {
  return recorded_result_to_json(RecordedResult{"randread/4k/qd32x1", "node-x", pod, at, json{{"iops", 1234}}}).dump();
}

ShareRequest request_for(const std::string& pod, milliseconds wait) {
  ShareRequest r;
  r.pvc = kPvc;
  r.workload = "randread/4k/qd32x1";
  r.ttl = std::chrono::hours(1);
  r.pod = pod;
  r.node = "node-" + pod;
  r.lease = seconds(1);
  r.wait_until = steady_clock::now() + wait;
  r.poll_interval = milliseconds(50);
  return r;
}

// The lock a PATCH body writes, and its resourceVersion.
std::optional<ProbeLock> lock_written(const HttpRequest& r) { return probe_lock_on(testing::body_of(r)); }
std::string rv_written(const HttpRequest& r) { return testing::body_of(r)["metadata"].value("resourceVersion", ""); }

TEST_CASE("a free PVC: the lock written with our pod, node, renew time and lease, on the read's resourceVersion") {
  ScriptedClient s;
  s.api->expect("GET " + kPath, json_answer(pvc(3)));
  s.api->expect("PATCH " + kPath, json_answer(pvc(4)));
  auto d = claim_or_reuse(*s.client, request_for("ml/a", seconds(5)));
  REQUIRE(d.ok());
  CHECK(s.api->spent());
  CHECK(d->action == ShareAction::kProbeLocked);
  CHECK(d->why == "PVC imagenet: no fresh result recorded, probing (lock taken)");
  const HttpRequest patch = s.api->sent().back();
  CHECK(patch.content_type == "application/merge-patch+json");
  CHECK(rv_written(patch) == "3");
  CHECK(testing::body_of(patch)["metadata"]["annotations"].size() == 1);  // ours only
  auto lock = lock_written(patch);
  REQUIRE(lock);
  CHECK(*lock == d->lock);
  CHECK(lock->pod == "ml/a");
  CHECK(lock->node == "node-ml/a");
  CHECK(lock->lease == seconds(1));
}

TEST_CASE("a fresh result is reused with no write; another workload's is not") {
  ScriptedClient s;
  s.api->expect("GET " + kPath, json_answer(pvc(3, {{kPvcResultAnnotation, result_text("ml/prober")}})));
  auto d = claim_or_reuse(*s.client, request_for("ml/a", seconds(5)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(d->reused->pod == "ml/prober");
  CHECK(s.api->sent().size() == 1);

  ShareRequest other = request_for("ml/a", seconds(5));
  other.workload = "read/1m/qd32x1";
  s.api->expect("GET " + kPath, json_answer(pvc(3, {{kPvcResultAnnotation, result_text("ml/prober")}})));
  s.api->expect("PATCH " + kPath, json_answer(pvc(4)));
  d = claim_or_reuse(*s.client, other);
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kProbeLocked);
}

TEST_CASE("a lost race (409): read again at once, then wait for the winner's result") {
  ScriptedClient s;
  s.api->expect("GET " + kPath, json_answer(pvc(3)));
  s.api->expect("PATCH " + kPath, testing::conflict_answer());
  std::atomic<int> reads{0};
  s.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    REQUIRE(r.method == "GET");
    if (++reads < 4) return json_answer(pvc(4, {{kPvcLockAnnotation, lock_text("ml/winner", system_clock::now())}}));
    return json_answer(pvc(5, {{kPvcResultAnnotation, result_text("ml/winner")}}));
  });
  auto d = claim_or_reuse(*s.client, request_for("ml/a", seconds(5)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(d->reused->pod == "ml/winner");
  CHECK(s.api->count("PATCH") == 1);  // never written beside the winner
}

TEST_CASE("a lock its holder renews is waited for, never taken, until the waiter's time runs out") {
  ScriptedClient s;
  // Each read shows a new renew time: the holder is alive.
  s.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    REQUIRE(r.method == "GET");
    return json_answer(pvc(3, {{kPvcLockAnnotation, lock_text("ml/holder", system_clock::now())}}));
  });
  const auto t0 = steady_clock::now();
  auto d = claim_or_reuse(*s.client, request_for("ml/waiter", milliseconds(2500)));
  REQUIRE(d.ok());
  CHECK(steady_clock::now() - t0 >= milliseconds(2500));  // more than two leases
  CHECK(d->action == ShareAction::kHolderStillProbing);
  REQUIRE(d->holder);
  CHECK(d->holder->pod == "ml/holder");
  CHECK(d->why.find("pod ml/holder on node node-x is still probing it") != std::string::npos);
  CHECK(s.api->count("PATCH") == 0);
  CHECK(s.api->count("GET") >= 20);  // a poll interval apart
}

TEST_CASE("a lock read unchanged for a whole lease is taken over, on the last read's resourceVersion") {
  ScriptedClient s;
  const std::string dead = lock_text("ml/dead", system_clock::now());
  s.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    if (r.method == "PATCH") return json_answer(pvc(9));
    return json_answer(pvc(8, {{kPvcLockAnnotation, dead}}));
  });
  const auto t0 = steady_clock::now();
  auto d = claim_or_reuse(*s.client, request_for("ml/w", seconds(5)));
  const auto waited = steady_clock::now() - t0;
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kProbeLocked);
  CHECK(d->why.find("took over the probe lock of pod ml/dead on node node-x") != std::string::npos);
  CHECK(waited >= seconds(1));  // not before a whole lease unchanged
  CHECK(waited < seconds(3));
  REQUIRE(s.api->count("PATCH") == 1);
  const HttpRequest patch = s.api->sent().back();
  CHECK(rv_written(patch) == "8");
  CHECK(lock_written(patch)->pod == "ml/w");
}

TEST_CASE("an orphan from long ago is taken over at once; beside a fresh result it is removed") {
  const auto long_ago = system_clock::now() - std::chrono::hours(2);
  ScriptedClient s;
  s.api->expect("GET " + kPath,
                json_answer(pvc(3, {{kPvcLockAnnotation, lock_text("ml/dead", long_ago, seconds(15))}})));
  s.api->expect("PATCH " + kPath, json_answer(pvc(4)));
  auto d = claim_or_reuse(*s.client, request_for("ml/next", seconds(30)));
  REQUIRE(d.ok());
  CHECK(s.api->spent());
  CHECK(d->action == ShareAction::kProbeLocked);
  CHECK(d->why.find("took over the probe lock of pod ml/dead") != std::string::npos);

  // A holder that died after a result was recorded: the next pod reuses it and removes the lock.
  s.api->expect("GET " + kPath,
                json_answer(pvc(5, {{kPvcResultAnnotation, result_text("ml/next")},
                                    {kPvcLockAnnotation, lock_text("ml/dead", long_ago, seconds(15))}})));
  s.api->expect("PATCH " + kPath, json_answer(pvc(6)));
  d = claim_or_reuse(*s.client, request_for("ml/later", seconds(30)));
  REQUIRE(d.ok());
  CHECK(s.api->spent());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(d->why.find("removed the orphaned probe lock of ml/dead") != std::string::npos);
  CHECK(testing::body_of(s.api->sent().back()) ==
        json{{"metadata", {{"resourceVersion", "5"}, {"annotations", {{kPvcLockAnnotation, nullptr}}}}}});
}

TEST_CASE("recording the result releases the lock in the same merge patch; a release removes only ours") {
  ScriptedClient s;
  s.api->expect("PATCH " + kPath, json_answer(pvc(4)));
  const RecordedResult r{"randread/4k/qd32x1", "node-a", "ml/a", system_clock::now(), json{{"iops", 1234}}};
  REQUIRE(record_shared_result(*s.client, kPvc, r).ok());
  CHECK(testing::body_of(s.api->sent().back()) ==
        json{{"metadata",
              {{"annotations",
                {{kPvcResultAnnotation, recorded_result_to_json(r).dump()}, {kPvcLockAnnotation, nullptr}}}}}});

  s.api->expect("GET " + kPath,
                json_answer(pvc(5, {{kPvcLockAnnotation, lock_text("ml/other", system_clock::now())}})));
  REQUIRE(release_probe_lock(*s.client, kPvc, "ml/a").ok());
  CHECK(s.api->sent().size() == 2);  // another pod's: left alone
  s.api->expect("GET " + kPath, json_answer(pvc(6, {{kPvcLockAnnotation, lock_text("ml/a", system_clock::now())}})));
  s.api->expect("PATCH " + kPath, testing::conflict_answer());  // moved on: left to the next
  REQUIRE(release_probe_lock(*s.client, kPvc, "ml/a").ok());
  CHECK(rv_written(s.api->sent().back()) == "6");
  CHECK(s.api->spent());
}

TEST_CASE("a renewal is stamped after its read, however long the read took; a 409 reads again") {
  ScriptedClient s;
  ProbeLock lock{"ml/a", "node-a", system_clock::from_time_t(1780000000), seconds(1)};
  auto clock = lock.renewed;
  // The clock moves on while the GET is answered (an outage retried for minutes, in small).
  s.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    if (r.method == "GET") {
      clock += std::chrono::minutes(3);
      return json_answer(pvc(7, {{kPvcLockAnnotation, probe_lock_to_json(lock).dump()}}));
    }
    return json_answer(pvc(8));
  });
  auto renewed = renew_probe_lock(*s.client, kPvc, lock, [&] { return clock; });
  REQUIRE(renewed.ok());
  CHECK_FALSE(*renewed);
  CHECK(lock.renewed == system_clock::from_time_t(1780000000) + std::chrono::minutes(3));
  CHECK(lock_written(s.api->sent().back())->renewed == lock.renewed);
  CHECK(rv_written(s.api->sent().back()) == "7");

  // Removed by hand: ours to write again. Then another writer between our read and write: read again.
  ScriptedClient t;
  t.api->expect("GET " + kPath, json_answer(pvc(10)));
  t.api->expect("PATCH " + kPath, testing::conflict_answer());
  t.api->expect("GET " + kPath, json_answer(pvc(11, {{"example.com/touched", "1"}})));
  t.api->expect("PATCH " + kPath, json_answer(pvc(12)));
  renewed = renew_probe_lock(*t.client, kPvc, lock, [&] { return clock; });
  REQUIRE(renewed.ok());
  CHECK_FALSE(*renewed);
  CHECK(t.api->spent());
  CHECK(rv_written(t.api->sent().back()) == "11");

  // Conflicts every time: given up after a few, for the next tick.
  ScriptedClient u;
  u.api->otherwise([&](const HttpRequest& r) -> TransportResult {
    return r.method == "GET" ? TransportResult(json_answer(pvc(13))) : TransportResult(testing::conflict_answer());
  });
  renewed = renew_probe_lock(*u.client, kPvc, lock, [&] { return clock; });
  REQUIRE_FALSE(renewed.ok());
  CHECK(renewed.error().conflict());
  CHECK(u.api->count("PATCH") == 5);
}

TEST_CASE("a holder whose lock was taken over learns it at its next renewal and never writes over it") {
  ScriptedClient s;
  testing::ScriptedApi* api = s.api;
  api->otherwise([](const HttpRequest&) -> TransportResult {
    return json_answer(pvc(20, {{kPvcLockAnnotation, lock_text("ml/taker", system_clock::now())}}));
  });
  ProbeLeaseRenewer renewer(std::move(s.client), kPvc, ProbeLock{"ml/slow", "node-a", system_clock::now(), seconds(1)});
  for (auto until = steady_clock::now() + seconds(3); !renewer.lost() && steady_clock::now() < until;)
    std::this_thread::sleep_for(milliseconds(20));
  CHECK(renewer.lost().load());
  CHECK(renewer.taken_by() == "ml/taker");
  CHECK(renewer.renewals() == 0);
  CHECK(api->count("PATCH") == 0);
}

TEST_CASE("a renewer renews every third of its lease") {
  ScriptedClient s;
  testing::ScriptedApi* api = s.api;
  ProbeLock ours{"ml/a", "node-a", system_clock::now(), seconds(1)};
  api->otherwise([&](const HttpRequest& r) -> TransportResult {
    if (r.method == "PATCH") return json_answer(pvc(31));
    return json_answer(pvc(30, {{kPvcLockAnnotation, probe_lock_to_json(ours).dump()}}));
  });
  {
    ProbeLeaseRenewer renewer(std::move(s.client), kPvc, ours);
    std::this_thread::sleep_for(milliseconds(1150));
    CHECK(renewer.renewals() >= 2);
    CHECK(renewer.renewals() <= 4);
    CHECK_FALSE(renewer.lost().load());
    CHECK(api->count("PATCH") >= 2);  // while the renewer, whose client owns `api`, lives
  }
}

}  // namespace
}  // namespace iogate
