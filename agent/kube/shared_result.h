// Many pods, one volume: a Job with 64 workers must not run 64 benchmarks at once against the
// same PersistentVolumeClaim. The first pod to probe records its result on the PVC; the others
// reuse it while it is younger than the policy's TTL.
//
// Two annotations on the PVC carry this, both compact JSON:
//   iogate.io/probe-result  {"workload","node","pod","time","result":{...}}  the last result
//   iogate.io/probe-lock    {"pod","node","renewed","lease_seconds"}        a probe in progress
// The lock is taken with a merge patch that carries the GET's resourceVersion, so when 64 pods
// race, the API server lets exactly one write win (409 for the rest), as leader election does with
// a Lease. What is reused is the measurement, never the verdict: each pod is judged with its own
// GPU count and labels.
//
// The lock is a lease, as a coordination.k8s.io Lease is for leader election: its holder renews it
// every third of its lease (ProbeLeaseRenewer) while it probes. A waiter takes it over once it has
// read it unchanged for a whole lease by its own clock, from reads no further apart than a third of
// a lease (a longer gap, an API stall, starts the count again: the holder could not renew either),
// so clock skew between nodes cannot expire a live lease; or at once when its renew time is older
// than a lease plus kClockSkewAllowance by the waiter's wall clock (an orphan from long ago). Of
// the waiters that find it expired, exactly one wins the takeover (the resourceVersion again).
// A waiter waits on a watch of the PVC, not by reading it again and again: one request for the
// whole wait while the holder renews (each renewal and the recorded result arrive on it), so that
// 512 waiters cost the API server 512 open watches, not 512 reads a second. When the watch stays
// silent longer than a renewal takes (the holder died, or the API stalls), the waiter reads the
// PVC itself, a poll interval apart, so the lease is judged on reads as above; a Role without the
// watch verb, or a server that cannot watch, gets the polling waiter throughout (with a warning).
// A dead holder's lock is so taken over about a third of a lease later than a poller would.
// A waiter never probes beside a live holder: when its time to wait runs out it says so
// (kHolderStillProbing) and the caller fails as its policy's on_error says. A holder whose
// renewals failed for a whole lease may find its lock taken over: the renewer then raises lost(),
// and the holder stops its probe and waits for the new holder's result like any waiter.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"
#include "kube/pvc_reader.h"

namespace iogate {

inline constexpr const char* kPvcResultAnnotation = "iogate.io/probe-result";
inline constexpr const char* kPvcLockAnnotation = "iogate.io/probe-lock";

// How long a probe lock lives unrenewed: what a holder's death costs the waiters, and how long an
// API stall may keep a live holder from renewing before it can lose its lock. client-go's leader
// election uses the same 15 s.
inline constexpr std::chrono::seconds kProbeLeaseDuration{15};
// How far another node's clock may be trusted to be off from ours: a recorded result from further
// in the future is distrusted, a lock renewed further in the past than its lease is an orphan.
inline constexpr std::chrono::minutes kClockSkewAllowance{1};

struct RecordedResult {
  std::string workload;   // a key of the workload ("randread/4k/qd32x1"): only the same one is reused
  std::string node, pod;  // who measured it ("namespace/name")
  std::chrono::system_clock::time_point time;
  nlohmann::json result;  // what the recorder stored (preflight: its measurement)
};

struct ProbeLock {
  std::string pod, node;                          // the holder
  std::chrono::system_clock::time_point renewed;  // by the holder's clock
  std::chrono::seconds lease{kProbeLeaseDuration};

  bool operator==(const ProbeLock&) const = default;
};

// The recorded result on a PVC object, when it is there and well formed; anything else (missing,
// edited by hand into nonsense) reads as absent, so the pod probes instead of failing.
std::optional<RecordedResult> recorded_result_on(const nlohmann::json& pvc);
// The lock likewise; a lease outside [1 s, 10 min] is read as kProbeLeaseDuration.
std::optional<ProbeLock> probe_lock_on(const nlohmann::json& pvc);
nlohmann::json recorded_result_to_json(const RecordedResult& r);
nlohmann::json probe_lock_to_json(const ProbeLock& lock);

// Whether `r` may stand in for a probe of `workload` at `now`: same workload, not older than
// `ttl`, and not from the future by more than kClockSkewAllowance.
bool reusable(const RecordedResult& r, const std::string& workload, std::chrono::nanoseconds ttl,
              std::chrono::system_clock::time_point now);

// How often a holder renews its lock (a third of its lease), and the longest gap between a
// waiter's reads that still counts as watching it.
std::chrono::milliseconds lease_renew_period(const ProbeLock& lock);

// Whether a lock read unchanged for `unchanged_for` (by the reader's steady clock, from reads no
// further apart than a third of its lease) is expired at the reader's wall-clock `now`.
bool lock_expired(const ProbeLock& lock, std::chrono::steady_clock::duration unchanged_for,
                  std::chrono::system_clock::time_point now);

enum class ShareAction {
  kReuse,               // a fresh result is on the PVC: use `reused`
  kProbeLocked,         // we hold the lock: probe under a ProbeLeaseRenewer, then record_shared_result
  kHolderStillProbing,  // `holder` still renews its lock at `wait_until`: do not probe beside it
  kInterrupted,         // `stop` rose while waiting for `holder`
};

struct ShareDecision {
  ShareAction action = ShareAction::kProbeLocked;
  std::optional<RecordedResult> reused;
  std::optional<ProbeLock> holder;  // the other pod's lock, for kHolderStillProbing and kInterrupted
  ProbeLock lock;                   // ours as taken, for kProbeLocked
  std::string why;                  // one line for the log: "reusing the result pod x measured on node y 12m ago"
};

struct ShareRequest {
  PvcRef pvc;
  std::string workload;
  std::chrono::nanoseconds ttl{};
  std::string pod, node;                             // who we are ("namespace/name")
  std::chrono::seconds lease{kProbeLeaseDuration};   // of our lock, when we take it
  std::chrono::steady_clock::time_point wait_until;  // stop waiting for a live holder then
  std::chrono::milliseconds poll_interval{1000};     // between reads where the waiter does not watch
  const std::atomic<bool>* stop = nullptr;           // SIGTERM: stop waiting at once (kInterrupted)
};

// Reuses a fresh result, or takes the lock (free, ours from an earlier life of this pod, or
// expired), or waits (watching the PVC) while another pod renews it. A result reused beside an
// orphaned lock removes the lock. Errors are API errors (403 without PVC RBAC, 404 for a missing
// PVC, the deadline): the caller decides.
ApiResult<ShareDecision> claim_or_reuse(ApiClient& api, const ShareRequest& request);

// Renews `lock` (ours): read, check it is still ours, write it back renewed at `now()` (read
// after the read, however long that took) with the read's resourceVersion (a 409 reads again).
// Nullopt once renewed; the other pod's lock when another pod holds it now. A lock that vanished
// (removed by hand) is ours to write again.
ApiResult<std::optional<ProbeLock>> renew_probe_lock(ApiClient& api, const PvcRef& pvc, ProbeLock& lock,
                                                     const std::function<std::chrono::system_clock::time_point()>& now);

// Records our result and releases our lock in one merge patch.
ApiStatus record_shared_result(ApiClient& api, const PvcRef& pvc, const RecordedResult& result);
// Releases our lock after a failed probe, so waiting pods need not wait for it to expire. Only
// removes the lock when it is still ours.
ApiStatus release_probe_lock(ApiClient& api, const PvcRef& pvc, const std::string& pod);

// Renews a held lock every third of its lease on a thread of its own, with a client of its own
// (ApiClient serves one request at a time, and the probe's owner keeps its own), until destroyed.
// A failed renewal is logged and tried again at the next tick; lost() rises, and renewing stops,
// once the lock is another pod's.
class ProbeLeaseRenewer {
 public:
  ProbeLeaseRenewer(std::unique_ptr<ApiClient> api, PvcRef pvc, ProbeLock lock);
  ~ProbeLeaseRenewer();  // stops renewing; waits at most for the request in flight
  ProbeLeaseRenewer(const ProbeLeaseRenewer&) = delete;
  ProbeLeaseRenewer& operator=(const ProbeLeaseRenewer&) = delete;

  const std::atomic<bool>& lost() const { return lost_; }
  int renewals() const { return renewals_.load(); }
  // The pod that took the lock over, once lost() (read after lost() rises).
  std::string taken_by() const;

 private:
  void run();

  std::unique_ptr<ApiClient> api_;
  PvcRef pvc_;
  ProbeLock lock_;
  std::atomic<bool> stop_{false}, lost_{false};
  std::atomic<int> renewals_{0};
  std::string taken_by_;  // written before lost_ rises
  std::thread thread_;
};

}  // namespace iogate
