// Many pods, one volume: a Job with 64 workers must not run 64 benchmarks at once against the
// same PersistentVolumeClaim. The first pod to probe records its result on the PVC; the others
// reuse it while it is younger than the policy's TTL.
//
// Two annotations on the PVC carry this, both compact JSON:
//   iogate.io/probe-result  {"workload","node","pod","time","result":{...}}  the last result
//   iogate.io/probe-lock    {"pod","node","expires"}                        a probe in progress
// The lock is taken with a merge patch that carries the GET's resourceVersion, so when 64 pods
// race, the API server lets exactly one write win (409 for the rest), as leader election does with
// a Lease. The others wait for the result (or for the lock to expire, if its holder died) and then
// reuse it. What is reused is the measurement, never the verdict: each pod is judged with its own
// GPU count and labels.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace iogate {

inline constexpr const char* kPvcResultAnnotation = "iogate.io/probe-result";
inline constexpr const char* kPvcLockAnnotation = "iogate.io/probe-lock";

struct RecordedResult {
  std::string workload;   // a key of the workload ("randread/4k/qd32x1"): only the same one is reused
  std::string node, pod;  // who measured it ("namespace/name")
  std::chrono::system_clock::time_point time;
  nlohmann::json result;  // what the recorder stored (preflight: its measurement)
};

struct ProbeLock {
  std::string pod, node;
  std::chrono::system_clock::time_point expires;
};

// The recorded result on a PVC object, when it is there and well formed; anything else (missing,
// edited by hand into nonsense) reads as absent, so the pod probes instead of failing.
std::optional<RecordedResult> recorded_result_on(const nlohmann::json& pvc);
std::optional<ProbeLock> probe_lock_on(const nlohmann::json& pvc);
nlohmann::json recorded_result_to_json(const RecordedResult& r);

// Whether `r` may stand in for a probe of `workload` at `now`: same workload, not older than
// `ttl`, and not from the future by more than a minute of clock skew.
bool reusable(const RecordedResult& r, const std::string& workload, std::chrono::nanoseconds ttl,
              std::chrono::system_clock::time_point now);

struct PvcRef {
  std::string ns, name;
};

enum class ShareAction {
  kReuse,        // a fresh result is on the PVC: use `reused`
  kProbeLocked,  // we hold the lock: probe, then record_shared_result (or release on failure)
  kProbeAlone,   // waited for another pod's probe until `wait_until`: probe without the lock
};

struct ShareDecision {
  ShareAction action = ShareAction::kProbeAlone;
  std::optional<RecordedResult> reused;
  std::string why;  // one line for the log: "reusing the result pod x measured on node y 12m ago"
};

struct ShareRequest {
  PvcRef pvc;
  std::string workload;
  std::chrono::nanoseconds ttl{};
  ProbeLock lock;                                    // ours: pod, node and how long our probe may take at most
  std::chrono::steady_clock::time_point wait_until;  // stop waiting for another pod's probe then
  std::chrono::milliseconds poll_interval{1000};
  const std::atomic<bool>* stop = nullptr;  // SIGTERM: stop waiting at once (kProbeAlone; the probe then stops too)
};

// Reuses a fresh result, or takes the lock, or waits (polling the PVC) while another pod holds
// it. Errors are API errors (403 without PVC RBAC, 404 for a missing PVC): the caller decides.
ApiResult<ShareDecision> claim_or_reuse(ApiClient& api, const ShareRequest& request);

// Records our result and releases our lock in one merge patch.
ApiStatus record_shared_result(ApiClient& api, const PvcRef& pvc, const RecordedResult& result);
// Releases our lock after a failed probe, so waiting pods need not wait for it to expire. Only
// removes the lock when it is still ours.
ApiStatus release_probe_lock(ApiClient& api, const PvcRef& pvc, const std::string& pod);

}  // namespace iogate
