// Sharing a result through a PVC against the test API server over real TLS: the lock as a lease
// (taken, renewed, taken over, never probed beside while renewed) with leases of a second or two.
#include <doctest/doctest.h>

#include <mutex>
#include <thread>

#include "base/clock.h"
#include "kube/operations.h"
#include "kube/shared_result.h"
#include "test_cluster.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;
using testing::TestCluster;

const PvcRef kPvc{"ml", "imagenet"};

json pvc_object(const std::map<std::string, std::string>& annotations = {}) {
  json a = json::object();
  for (const auto& [k, v] : annotations) a[k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", kPvc.name}, {"namespace", kPvc.ns}, {"annotations", a}}}};
}

std::string lock_text(const std::string& pod, system_clock::time_point renewed, seconds lease) {
  return probe_lock_to_json(ProbeLock{pod, "node-x", renewed, lease}).dump();
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
  r.poll_interval = milliseconds(100);
  return r;
}

std::optional<ProbeLock> stored_lock(const TestCluster& c) {
  return probe_lock_on(c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name));
}

}  // namespace

TEST_CASE("a free PVC: the lock is taken with our pod, node, renew time and lease") {
  TestCluster c;
  c.seed(pvc_object({{"example.com/backup", "daily"}}));
  ApiClient api(c.config, testing::fast_retry());
  auto d = claim_or_reuse(api, request_for("ml/a", seconds(5)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kProbeLocked);
  auto lock = stored_lock(c);
  REQUIRE(lock);
  CHECK(*lock == d->lock);
  CHECK(lock->pod == "ml/a");
  CHECK(lock->node == "node-ml/a");
  CHECK(lock->lease == seconds(1));
  CHECK(c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name)["metadata"]["annotations"]["example.com/backup"] ==
        "daily");
}

TEST_CASE("a lock its holder renews is waited for, never taken, until the waiter's time runs out") {
  TestCluster c;
  c.seed(pvc_object());
  ApiClient holder_api(c.config, testing::fast_retry());
  auto taken = claim_or_reuse(holder_api, request_for("ml/holder", seconds(5)));
  REQUIRE(taken.ok());
  REQUIRE(taken->action == ShareAction::kProbeLocked);
  {
    ProbeLeaseRenewer renewer(std::make_unique<ApiClient>(c.config, testing::fast_retry()), kPvc, taken->lock);
    ApiClient api(c.config, testing::fast_retry());
    // Three leases of waiting: a lock that was not renewed would have been taken over twice.
    auto d = claim_or_reuse(api, request_for("ml/waiter", milliseconds(3000)));
    REQUIRE(d.ok());
    CHECK(d->action == ShareAction::kHolderStillProbing);
    REQUIRE(d->holder);
    CHECK(d->holder->pod == "ml/holder");
    CHECK(d->why.find("ml/holder") != std::string::npos);
    CHECK(renewer.renewals() >= 5);
    CHECK_FALSE(renewer.lost().load());
  }
  auto lock = stored_lock(c);
  REQUIRE(lock);
  CHECK(lock->pod == "ml/holder");
}

TEST_CASE("a lock that stops being renewed is taken over after one lease, by exactly one of many waiters") {
  TestCluster c;
  c.seed(pvc_object({{kPvcLockAnnotation, lock_text("ml/dead", system_clock::now(), seconds(1))}}));
  constexpr int kWaiters = 8;
  std::vector<ShareDecision> decisions(kWaiters);
  std::vector<std::thread> threads;
  std::mutex m;
  std::vector<std::unique_ptr<ProbeLeaseRenewer>> renewers;  // the winner renews, as preflight does
  const auto started = steady_clock::now();
  for (int i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&, i] {
      ApiClient api(c.config, testing::fast_retry());
      auto d = claim_or_reuse(api, request_for("ml/w" + std::to_string(i), seconds(3)));
      if (!d.ok()) return;
      decisions[i] = *d;
      if (d->action != ShareAction::kProbeLocked) return;
      std::lock_guard<std::mutex> hold(m);
      renewers.push_back(std::make_unique<ProbeLeaseRenewer>(
          std::make_unique<ApiClient>(c.config, testing::fast_retry()), kPvc, d->lock));
    });
  }
  for (auto& t : threads) t.join();
  const auto waited = steady_clock::now() - started;
  int locked = 0, still = 0;
  std::string winner;
  for (int i = 0; i < kWaiters; ++i) {
    if (decisions[i].action == ShareAction::kProbeLocked) {
      ++locked;
      winner = "ml/w" + std::to_string(i);
      CHECK(decisions[i].why.find("took over the probe lock of pod ml/dead") != std::string::npos);
    }
    if (decisions[i].action == ShareAction::kHolderStillProbing) ++still;
  }
  CHECK(locked == 1);
  CHECK(locked + still == kWaiters);  // the others waited for the winner, renewing, to the end
  CHECK(waited >= seconds(1));        // not before a whole lease unchanged
  auto lock = stored_lock(c);
  REQUIRE(lock);
  CHECK(lock->pod == winner);
  renewers.clear();
}

TEST_CASE("an orphaned lock from long ago is taken over at once; beside a fresh result it is removed") {
  TestCluster c;
  const auto long_ago = system_clock::now() - std::chrono::hours(2);
  c.seed(pvc_object({{kPvcLockAnnotation, lock_text("ml/dead", long_ago, kProbeLeaseDuration)}}));
  ApiClient api(c.config, testing::fast_retry());
  auto d = claim_or_reuse(api, request_for("ml/next", seconds(30)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kProbeLocked);
  CHECK(d->why.find("took over the probe lock of pod ml/dead") != std::string::npos);
  REQUIRE(record_shared_result(
              api, kPvc,
              RecordedResult{"randread/4k/qd32x1", "node-next", "ml/next", system_clock::now(), json{{"iops", 1234}}})
              .ok());
  CHECK_FALSE(stored_lock(c));

  // A holder that died after an earlier result was recorded: the next pod reuses the result and
  // cleans the lock up.
  auto pvc = c.stored("persistentvolumeclaims", kPvc.ns, kPvc.name);
  pvc["metadata"]["annotations"][kPvcLockAnnotation] = lock_text("ml/dead", long_ago, kProbeLeaseDuration);
  REQUIRE(api.patch("/api/v1/namespaces/ml/persistentvolumeclaims/imagenet", PatchType::kMerge,
                    {{"metadata", {{"annotations", pvc["metadata"]["annotations"]}}}})
              .ok());
  d = claim_or_reuse(api, request_for("ml/later", seconds(30)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(d->why.find("removed the orphaned probe lock of ml/dead") != std::string::npos);
  CHECK_FALSE(stored_lock(c));
}

TEST_CASE("a holder whose lock was taken over learns it at its next renewal") {
  TestCluster c;
  c.seed(pvc_object());
  ApiClient api(c.config, testing::fast_retry());
  auto taken = claim_or_reuse(api, request_for("ml/slow", seconds(5)));
  REQUIRE(taken.ok());
  ProbeLeaseRenewer renewer(std::make_unique<ApiClient>(c.config, testing::fast_retry()), kPvc, taken->lock);
  // Another pod's lock written over ours, as a takeover after our renewals failed would.
  REQUIRE(
      api.patch("/api/v1/namespaces/ml/persistentvolumeclaims/imagenet", PatchType::kMerge,
                {{"metadata",
                  {{"annotations", {{kPvcLockAnnotation, lock_text("ml/taker", system_clock::now(), seconds(1))}}}}}})
          .ok());
  for (auto until = steady_clock::now() + seconds(3); !renewer.lost() && steady_clock::now() < until;)
    std::this_thread::sleep_for(milliseconds(20));
  CHECK(renewer.lost().load());
  CHECK(renewer.taken_by() == "ml/taker");
  auto lock = stored_lock(c);
  REQUIRE(lock);
  CHECK(lock->pod == "ml/taker");  // the renewer never wrote over the new holder
}

TEST_CASE("a renewal is stamped after its read, however long the read took") {
  TestCluster c;
  c.seed(pvc_object());
  ApiClient api(c.config, testing::fast_retry());
  auto taken = claim_or_reuse(api, request_for("ml/a", seconds(5)));
  REQUIRE(taken.ok());
  ProbeLock lock = taken->lock;
  // The clock moves on while the GET is answered (an outage retried for minutes, in small).
  auto clock = lock.renewed;
  auto slow = testing::hooked_client(c.config, [&](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "GET") clock += std::chrono::minutes(3);
    return std::nullopt;
  });
  auto renewed = renew_probe_lock(*slow, kPvc, lock, [&] { return clock; });
  REQUIRE(renewed.ok());
  CHECK_FALSE(*renewed);
  CHECK(stored_lock(c)->renewed == lock.renewed);
  CHECK(lock.renewed == taken->lock.renewed + std::chrono::minutes(3));
}

TEST_CASE("a renewal re-writes a lock removed by hand and reads again after a 409") {
  TestCluster c;
  c.seed(pvc_object());
  ApiClient api(c.config, testing::fast_retry());
  auto taken = claim_or_reuse(api, request_for("ml/a", seconds(5)));
  REQUIRE(taken.ok());
  REQUIRE(patch_pvc_annotations(api, kPvc.ns, kPvc.name, {{kPvcLockAnnotation, std::nullopt}}).ok());
  ProbeLock lock = taken->lock;
  const auto later = lock.renewed + seconds(2);
  auto renewed = renew_probe_lock(api, kPvc, lock, [&] { return later; });
  REQUIRE(renewed.ok());
  CHECK_FALSE(*renewed);
  auto stored = stored_lock(c);
  REQUIRE(stored);
  CHECK(stored->renewed == later);

  // Another writer between the renewal's read and its write: the 409 is read again, not lost.
  bool touched = false;
  auto hooked = testing::hooked_client(c.config, [&](const HttpRequest& r) -> std::optional<TransportResult> {
    if (r.method == "PATCH" && !touched) {
      touched = true;
      ApiClient other(c.config, testing::fast_retry());
      REQUIRE(patch_pvc_annotations(other, kPvc.ns, kPvc.name, {{"example.com/touched", "1"}}).ok());
    }
    return std::nullopt;
  });
  renewed = renew_probe_lock(*hooked, kPvc, lock, [&] { return later + seconds(2); });
  REQUIRE(renewed.ok());
  CHECK_FALSE(*renewed);
  CHECK(stored_lock(c)->renewed == later + seconds(2));
  CHECK(touched);
}

}  // namespace iogate
