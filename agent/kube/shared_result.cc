#include "kube/shared_result.h"

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/json_fields.h"
#include "kube/operations.h"

namespace iogate {
namespace {

using std::chrono::system_clock;

std::optional<nlohmann::json> annotation_json(const nlohmann::json& object, const char* key) {
  std::string text = string_at(object_at(object_at(object, "metadata"), "annotations"), key);
  if (text.empty()) return std::nullopt;
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

std::string age_text(system_clock::duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  return fmt::format("{}h", s / 3600);
}

// Writes `lock` over whatever lock the PVC had at `resource_version`: the API server refuses (409)
// every racer but one, and a holder's renewal that lost the race to a takeover.
ApiResult<nlohmann::json> write_lock(ApiClient& api, const PvcRef& pvc, const std::string& resource_version,
                                     const ProbeLock& lock) {
  nlohmann::json patch = {{"metadata",
                           {{"resourceVersion", resource_version},
                            {"annotations", {{kPvcLockAnnotation, probe_lock_to_json(lock).dump()}}}}}};
  return api.patch(pvc_path(pvc), PatchType::kMerge, patch);
}

// Removes the lock the PVC had at `resource_version`; a 409 (it moved on) leaves it to the next.
ApiStatus remove_lock(ApiClient& api, const PvcRef& pvc, const std::string& resource_version) {
  nlohmann::json patch = {
      {"metadata", {{"resourceVersion", resource_version}, {"annotations", {{kPvcLockAnnotation, nullptr}}}}}};
  auto r = api.patch(pvc_path(pvc), PatchType::kMerge, patch);
  if (!r.ok() && !r.error().conflict()) return r.error();
  return Ok{};
}

// A time as the lock's JSON keeps it, so that the lock we hold equals the one we read back.
system_clock::time_point as_written(system_clock::time_point t) {
  return std::chrono::floor<std::chrono::microseconds>(t);
}

std::string age_of(const ProbeLock& lock, system_clock::time_point now) {
  return now >= lock.renewed ? age_text(now - lock.renewed) + " ago" : "ahead of our clock";
}

}  // namespace

std::optional<RecordedResult> recorded_result_on(const nlohmann::json& pvc) {
  auto j = annotation_json(pvc, kPvcResultAnnotation);
  if (!j) return std::nullopt;
  auto time = parse_rfc3339_utc(string_at(*j, "time"));
  auto result = j->find("result");
  if (!time || result == j->end() || !result->is_object()) return std::nullopt;
  RecordedResult r;
  r.workload = string_at(*j, "workload");
  r.node = string_at(*j, "node");
  r.pod = string_at(*j, "pod");
  r.time = *time;
  r.result = *result;
  if (r.workload.empty()) return std::nullopt;
  return r;
}

std::optional<ProbeLock> probe_lock_on(const nlohmann::json& pvc) {
  auto j = annotation_json(pvc, kPvcLockAnnotation);
  if (!j) return std::nullopt;
  auto renewed = parse_rfc3339_utc(string_at(*j, "renewed"));
  std::string pod = string_at(*j, "pod");
  if (!renewed || pod.empty()) return std::nullopt;
  ProbeLock lock{pod, string_at(*j, "node"), *renewed, kProbeLeaseDuration};
  auto lease = j->find("lease_seconds");
  if (lease != j->end() && lease->is_number_integer()) {
    auto s = lease->get<int64_t>();
    if (s >= 1 && s <= 600) lock.lease = std::chrono::seconds(s);
  }
  return lock;
}

nlohmann::json probe_lock_to_json(const ProbeLock& lock) {
  return {{"pod", lock.pod},
          {"node", lock.node},
          {"renewed", rfc3339_micro(lock.renewed)},
          {"lease_seconds", lock.lease.count()}};
}

nlohmann::json recorded_result_to_json(const RecordedResult& r) {
  return {{"workload", r.workload},
          {"node", r.node},
          {"pod", r.pod},
          {"time", rfc3339_seconds(r.time)},
          {"result", r.result}};
}

bool reusable(const RecordedResult& r, const std::string& workload, std::chrono::nanoseconds ttl,
              system_clock::time_point now) {
  if (r.workload != workload || ttl <= std::chrono::nanoseconds::zero()) return false;
  if (r.time > now + kClockSkewAllowance) return false;  // a clock far ahead: distrust it
  return now - r.time < ttl;
}

std::chrono::milliseconds lease_renew_period(const ProbeLock& lock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(lock.lease) / 3;
}

bool lock_expired(const ProbeLock& lock, std::chrono::steady_clock::duration unchanged_for,
                  system_clock::time_point now) {
  return unchanged_for >= lock.lease || lock.renewed + lock.lease + kClockSkewAllowance < now;
}

namespace {

using Steady = std::chrono::steady_clock;

// How long a waiter that sees no other pod's lock (it has just lost the race for it, or is
// reading the PVC for the first time) waits for the watch's next event before reading the PVC.
constexpr std::chrono::seconds kRaceSilence{5};
// How much later than its holder's renewal period a renewal may arrive on the watch before the
// waiter reads the PVC itself: the renewal's own request takes time.
constexpr std::chrono::seconds kRenewalSlack{2};

}  // namespace

ApiResult<ShareDecision> claim_or_reuse(ApiClient& api, const ShareRequest& req) {
  bool announced_wait = false;
  PvcReader reader(api, req.pvc, req.stop, req.poll_interval);
  // The other pod's lock as last read, since when it reads the same, and when it was last read.
  std::optional<ProbeLock> seen;
  Steady::time_point seen_since, last_read;
  std::optional<ProbeLock> waited_for;  // the lock we wait on, for a wait that runs out
  bool lost_race = false;
  for (;;) {
    const Steady::duration silence =
        waited_for ? Steady::duration(lease_renew_period(*waited_for) + kRenewalSlack) : Steady::duration(kRaceSilence);
    auto got = lost_race && !reader.watching() ? reader.read_now() : reader.next(req.wait_until, silence);
    lost_race = false;
    if (!got.ok()) return got.error();
    auto holder_decision = [&](ShareAction action, std::string why) {
      ShareDecision d;
      d.action = action;
      d.holder = waited_for;
      d.why = std::move(why);
      return d;
    };
    if (!*got) {
      const auto now = system_clock::now();
      if (req.stop && req.stop->load()) {
        return holder_decision(ShareAction::kInterrupted,
                               fmt::format("PVC {}: stopped waiting for pod {}: interrupted", req.pvc.name,
                                           waited_for ? waited_for->pod : "?"));
      }
      if (!waited_for)
        return ApiError{"GET " + pvc_path(req.pvc), 0, "DeadlineExceeded", "no time left to read the PVC"};
      return holder_decision(
          ShareAction::kHolderStillProbing,
          fmt::format("PVC {}: pod {} on node {} is still probing it (lock renewed {}); no time left to wait for its "
                      "result, and a second probe beside it would measure both",
                      req.pvc.name, waited_for->pod, waited_for->node, age_of(*waited_for, now)));
    }
    const nlohmann::json& pvc = (*got)->pvc;
    const auto now = system_clock::now();
    const auto read_at = (*got)->at;
    std::optional<ProbeLock> lock = probe_lock_on(pvc);
    const bool others = lock && lock->pod != req.pod;
    if (others && (!seen || *seen != *lock || read_at - last_read > lease_renew_period(*lock))) {
      seen = lock;
      seen_since = read_at;
    }
    last_read = read_at;
    const bool expired = others && lock_expired(*lock, read_at - seen_since, now);

    if (auto recorded = recorded_result_on(pvc); recorded && reusable(*recorded, req.workload, req.ttl, now)) {
      ShareDecision d;
      d.action = ShareAction::kReuse;
      d.why = fmt::format("PVC {}: reusing the result pod {} measured on node {} {} ago (ttl {})", req.pvc.name,
                          recorded->pod, recorded->node, age_text(now - recorded->time),
                          age_text(std::chrono::duration_cast<system_clock::duration>(req.ttl)));
      d.reused = std::move(recorded);
      if (expired) {
        // Its holder died after a result was recorded: the lock would only hold up the next pod.
        auto removed = remove_lock(api, req.pvc, resource_version_of(pvc));
        if (removed.ok()) d.why += fmt::format("; removed the orphaned probe lock of {}", lock->pod);
      }
      return d;
    }
    if (!others || expired) {
      waited_for.reset();
      ProbeLock ours{req.pod, req.node, as_written(now), req.lease};
      auto taken = write_lock(api, req.pvc, resource_version_of(pvc), ours);
      if (taken.ok()) {
        ShareDecision d;
        d.action = ShareAction::kProbeLocked;
        d.lock = ours;
        d.why = expired ? fmt::format(
                              "PVC {}: took over the probe lock of pod {} on node {} (renewed {}, lease {}), "
                              "probing",
                              req.pvc.name, lock->pod, lock->node, age_of(*lock, now), age_text(lock->lease))
                        : fmt::format("PVC {}: no fresh result recorded, probing (lock taken)", req.pvc.name);
        return d;
      }
      if (!taken.error().conflict()) return taken.error();
      // The write that beat ours comes next on the watch (or the next read).
      spdlog::debug("PVC {}: another pod wrote first (409), reading it again", req.pvc.name);
      lost_race = true;
      continue;
    }
    waited_for = lock;
    if (!announced_wait) {
      spdlog::info("PVC {}: pod {} on node {} is probing it; waiting for its result", req.pvc.name, lock->pod,
                   lock->node);
      announced_wait = true;
    }
  }
}

ApiResult<std::optional<ProbeLock>> renew_probe_lock(ApiClient& api, const PvcRef& pvc, ProbeLock& lock,
                                                     const std::function<system_clock::time_point()>& now) {
  // Every 409 means someone wrote the PVC between our read and our write; a few in a row is a
  // busy PVC, and the next tick tries again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto current = api.get(pvc_path(pvc));
    if (!current.ok()) return current.error();
    auto on_pvc = probe_lock_on(*current);
    if (on_pvc && on_pvc->pod != lock.pod) return on_pvc;
    // Stamped after the read, not when the renewal began: a read retried through a long API
    // outage must not write a renew time that already reads as an orphan's.
    ProbeLock renewed = lock;
    renewed.renewed = as_written(now());
    auto written = write_lock(api, pvc, resource_version_of(*current), renewed);
    if (written.ok()) {
      lock = renewed;
      return std::optional<ProbeLock>();
    }
    if (!written.error().conflict()) return written.error();
  }
  return ApiError{"PATCH " + pvc_path(pvc), 409, "Conflict", "the PVC changed under every renewal of the probe lock"};
}

ApiStatus record_shared_result(ApiClient& api, const PvcRef& pvc, const RecordedResult& result) {
  return patch_pvc_annotations(
      api, pvc.ns, pvc.name,
      {{kPvcResultAnnotation, recorded_result_to_json(result).dump()}, {kPvcLockAnnotation, std::nullopt}});
}

ApiStatus release_probe_lock(ApiClient& api, const PvcRef& pvc, const std::string& pod) {
  auto current = api.get(pvc_path(pvc));
  if (!current.ok()) return current.error();
  auto lock = probe_lock_on(*current);
  if (!lock || lock->pod != pod) return Ok{};
  return remove_lock(api, pvc, resource_version_of(*current));
}

ProbeLeaseRenewer::ProbeLeaseRenewer(std::unique_ptr<ApiClient> api, PvcRef pvc, ProbeLock lock)
    : api_(std::move(api)), pvc_(std::move(pvc)), lock_(std::move(lock)) {
  api_->set_stop(&stop_);
  thread_ = std::thread([this] { run(); });
}

ProbeLeaseRenewer::~ProbeLeaseRenewer() {
  stop_ = true;
  thread_.join();
}

std::string ProbeLeaseRenewer::taken_by() const { return lost_.load() ? taken_by_ : std::string(); }

void ProbeLeaseRenewer::run() {
  using Steady = std::chrono::steady_clock;
  const Steady::duration period = lease_renew_period(lock_);
  for (auto next = Steady::now() + period;; next += period) {
    while (!stop_.load() && Steady::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (stop_.load()) return;
    auto renewed = renew_probe_lock(*api_, pvc_, lock_, [] { return system_clock::now(); });
    if (stop_.load()) return;
    if (!renewed.ok()) {
      spdlog::warn("PVC {}: could not renew the probe lock: {}", pvc_.name, renewed.error().summary());
    } else if (*renewed) {
      taken_by_ = (*renewed)->pod;
      lost_ = true;
      return;
    } else {
      ++renewals_;
      spdlog::debug("PVC {}: probe lock renewed", pvc_.name);
    }
    // A renewal that took longer than a period (an API stall) is not followed by a burst.
    if (Steady::now() > next + period) next = Steady::now();
  }
}

}  // namespace iogate
