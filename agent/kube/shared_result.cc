#include "kube/shared_result.h"

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/json_fields.h"
#include "kube/operations.h"

namespace iogate {
namespace {

using std::chrono::system_clock;

std::string pvc_path(const PvcRef& pvc) {
  return "/api/v1/namespaces/" + pvc.ns + "/persistentvolumeclaims/" + pvc.name;
}

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

// Takes the lock: the resourceVersion makes the API server refuse (409) every racer but one.
ApiResult<nlohmann::json> take_lock(ApiClient& api, const PvcRef& pvc, const std::string& resource_version,
                                    const ProbeLock& lock) {
  nlohmann::json value = {{"pod", lock.pod}, {"node", lock.node}, {"expires", rfc3339_seconds(lock.expires)}};
  nlohmann::json patch = {
      {"metadata", {{"resourceVersion", resource_version}, {"annotations", {{kPvcLockAnnotation, value.dump()}}}}}};
  return api.patch(pvc_path(pvc), PatchType::kMerge, patch);
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
  auto expires = parse_rfc3339_utc(string_at(*j, "expires"));
  if (!expires) return std::nullopt;
  return ProbeLock{string_at(*j, "pod"), string_at(*j, "node"), *expires};
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
  if (r.time > now + std::chrono::minutes(1)) return false;  // a clock far ahead: distrust it
  return now - r.time < ttl;
}

ApiResult<ShareDecision> claim_or_reuse(ApiClient& api, const ShareRequest& req) {
  bool announced_wait = false;
  for (;;) {
    auto pvc = api.get(pvc_path(req.pvc));
    if (!pvc.ok()) return pvc.error();
    const auto now = system_clock::now();
    if (auto recorded = recorded_result_on(*pvc); recorded && reusable(*recorded, req.workload, req.ttl, now)) {
      ShareDecision d;
      d.action = ShareAction::kReuse;
      d.why = fmt::format("PVC {}: reusing the result pod {} measured on node {} {} ago (ttl {})", req.pvc.name,
                          recorded->pod, recorded->node, age_text(now - recorded->time),
                          age_text(std::chrono::duration_cast<system_clock::duration>(req.ttl)));
      d.reused = std::move(recorded);
      return d;
    }
    auto lock = probe_lock_on(*pvc);
    const bool held_by_other = lock && lock->pod != req.lock.pod && lock->expires > now;
    if (!held_by_other) {
      std::string rv = string_at(object_at(*pvc, "metadata"), "resourceVersion");
      auto taken = take_lock(api, req.pvc, rv, req.lock);
      if (taken.ok()) {
        ShareDecision d;
        d.action = ShareAction::kProbeLocked;
        d.why = lock && lock->pod != req.lock.pod
                    ? fmt::format("PVC {}: took over the probe lock of {} (expired), probing", req.pvc.name, lock->pod)
                    : fmt::format("PVC {}: no fresh result recorded, probing (lock taken)", req.pvc.name);
        return d;
      }
      if (!taken.error().conflict()) return taken.error();
      spdlog::debug("PVC {}: another pod wrote first (409), reading it again", req.pvc.name);
      continue;
    }
    if (req.stop && req.stop->load()) {
      ShareDecision d;
      d.action = ShareAction::kProbeAlone;
      d.why = fmt::format("PVC {}: stopped waiting for pod {}: interrupted", req.pvc.name, lock->pod);
      return d;
    }
    if (std::chrono::steady_clock::now() + req.poll_interval >= req.wait_until) {
      ShareDecision d;
      d.action = ShareAction::kProbeAlone;
      d.why = fmt::format("PVC {}: pod {} on node {} is still probing; not waiting longer, probing too", req.pvc.name,
                          lock->pod, lock->node);
      return d;
    }
    if (!announced_wait) {
      spdlog::info("PVC {}: pod {} on node {} is probing it; waiting for its result", req.pvc.name, lock->pod,
                   lock->node);
      announced_wait = true;
    }
    std::this_thread::sleep_for(req.poll_interval);
  }
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
  std::string rv = string_at(object_at(*current, "metadata"), "resourceVersion");
  nlohmann::json patch = {{"metadata", {{"resourceVersion", rv}, {"annotations", {{kPvcLockAnnotation, nullptr}}}}}};
  auto r = api.patch(pvc_path(pvc), PatchType::kMerge, patch);
  if (!r.ok() && !r.error().conflict()) return r.error();
  return Ok{};
}

}  // namespace iogate
