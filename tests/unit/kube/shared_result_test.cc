#include <doctest/doctest.h>

#include "kube/shared_result.h"

using namespace iogate;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::system_clock;

namespace {

nlohmann::json pvc_with(const std::map<std::string, std::string>& annotations) {
  nlohmann::json a = nlohmann::json::object();
  for (const auto& [k, v] : annotations) a[k] = v;
  return {{"metadata", {{"name", "imagenet"}, {"annotations", a}}}};
}

}  // namespace

TEST_CASE("a recorded result reads back from the PVC's annotation") {
  RecordedResult r{
      "randread/4k/qd32x1", "node-1", "ml/train-0", system_clock::from_time_t(1780000000), {{"iops", 5000}}};
  auto pvc = pvc_with({{kPvcResultAnnotation, recorded_result_to_json(r).dump()}});
  auto back = recorded_result_on(pvc);
  REQUIRE(back);
  CHECK(back->workload == r.workload);
  CHECK(back->node == "node-1");
  CHECK(back->pod == "ml/train-0");
  CHECK(back->time == r.time);
  CHECK(back->result["iops"] == 5000);
}

TEST_CASE("a missing or malformed record reads as absent, so the pod probes") {
  CHECK_FALSE(recorded_result_on(nlohmann::json::object()));
  CHECK_FALSE(recorded_result_on(pvc_with({})));
  CHECK_FALSE(recorded_result_on(pvc_with({{kPvcResultAnnotation, "not json"}})));
  CHECK_FALSE(
      recorded_result_on(pvc_with({{kPvcResultAnnotation, R"({"workload":"w","time":"yesterday","result":{}})"}})));
  CHECK_FALSE(
      recorded_result_on(pvc_with({{kPvcResultAnnotation, R"({"workload":"w","time":"2026-12-02T10:00:00Z"})"}})));
  CHECK_FALSE(recorded_result_on(pvc_with({{kPvcResultAnnotation, R"({"time":"2026-12-02T10:00:00Z","result":{}})"}})));
  CHECK(recorded_result_on(
      pvc_with({{kPvcResultAnnotation, R"({"workload":"w","time":"2026-12-02T10:00:00.123456Z","result":{}})"}})));
}

TEST_CASE("a lock reads back with its holder, renew time and lease") {
  const auto renewed = system_clock::from_time_t(1796205600) + std::chrono::microseconds(250);
  ProbeLock written{"ml/p", "n", renewed, std::chrono::seconds(20)};
  auto lock = probe_lock_on(pvc_with({{kPvcLockAnnotation, probe_lock_to_json(written).dump()}}));
  REQUIRE(lock);
  CHECK(*lock == written);  // to the microsecond: every renewal reads as a change
  CHECK(probe_lock_to_json(written)["lease_seconds"] == 20);

  // A lease out of bounds (or absent) is read as the default one.
  lock = probe_lock_on(pvc_with(
      {{kPvcLockAnnotation, R"({"pod":"ml/p","node":"n","renewed":"2026-12-02T10:00:00Z","lease_seconds":86400})"}}));
  REQUIRE(lock);
  CHECK(lock->lease == kProbeLeaseDuration);
  lock = probe_lock_on(pvc_with({{kPvcLockAnnotation, R"({"pod":"ml/p","renewed":"2026-12-02T10:00:00Z"})"}}));
  REQUIRE(lock);
  CHECK(lock->lease == kProbeLeaseDuration);

  // No holder or no renew time (an older iogate's {"expires"} lock among them): no lock.
  CHECK_FALSE(probe_lock_on(pvc_with({{kPvcLockAnnotation, R"({"pod":"ml/p"})"}})));
  CHECK_FALSE(probe_lock_on(pvc_with({{kPvcLockAnnotation, R"({"renewed":"2026-12-02T10:00:00Z"})"}})));
  CHECK_FALSE(
      probe_lock_on(pvc_with({{kPvcLockAnnotation, R"({"pod":"ml/p","node":"n","expires":"2026-12-02T10:00:00Z"})"}})));
}

TEST_CASE("a lock expires when read unchanged for a lease, or when its renew time is an orphan's") {
  using std::chrono::seconds;
  const auto now = system_clock::from_time_t(1780000000);
  ProbeLock lock{"ml/p", "n", now, seconds(15)};
  CHECK_FALSE(lock_expired(lock, seconds(0), now));
  CHECK_FALSE(lock_expired(lock, seconds(14), now));
  CHECK(lock_expired(lock, seconds(15), now));
  // The holder's clock far behind ours, but the lock still changing: live (skew is no expiry).
  lock.renewed = now - seconds(50);
  CHECK_FALSE(lock_expired(lock, seconds(1), now));
  // Renewed longer ago than a lease plus the skew allowance: an orphan, expired at first sight.
  lock.renewed = now - seconds(15) - kClockSkewAllowance - seconds(1);
  CHECK(lock_expired(lock, seconds(0), now));
}

TEST_CASE("a result is reusable for the same workload within its TTL only") {
  const auto now = system_clock::from_time_t(1780000000);
  RecordedResult r{"randread/4k/qd32x1", "n", "p", now - minutes(30), {}};
  CHECK(reusable(r, "randread/4k/qd32x1", hours(1), now));
  CHECK_FALSE(reusable(r, "randread/4k/qd32x1", minutes(29), now));
  CHECK_FALSE(reusable(r, "read/1m/qd32x1", hours(1), now));
  CHECK_FALSE(reusable(r, "randread/4k/qd32x1", std::chrono::nanoseconds::zero(), now));
  r.time = now + std::chrono::seconds(30);  // a recorder's clock slightly ahead
  CHECK(reusable(r, "randread/4k/qd32x1", hours(1), now));
  r.time = now + minutes(10);  // far ahead: distrusted
  CHECK_FALSE(reusable(r, "randread/4k/qd32x1", hours(1), now));
}
