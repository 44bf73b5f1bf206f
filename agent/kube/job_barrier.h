// One verdict for a job on a shared volume: the pods of one distributed job (kube/job_identity.h)
// meet on their PVC, probe it at the same time for the same window, and the sum of what each
// read is judged against the whole job's demand. A single pod's probe measures one client on an
// idle server; N pods reading together find the server's own limit, as MLPerf Storage measures
// shared storage with many clients at once.
//
// The barrier is one annotation on the PVC per job, iogate.io/job-probe.<hash of the job's key>,
// compact JSON (JobBarrier), written only by read-modify-write merge patches that carry the read's
// resourceVersion (a 409 reads again and redoes the edit), as the probe lock is:
//   gathering  the first member writes it with itself in `members`; each arriving member adds
//              itself. It closes when `expected` members are in, or `gather` after it opened
//              (by the opener's clock, or by the member's own clock since it first saw it,
//              whichever comes first): the member that sees that writes `probing`.
//   probing    the members listed probe at once (each starts when it sees the close on its watch
//              of the PVC) for the same `window`, no early stop; each adds its own figures.
//   done       once every member reported, or a member's report deadline passed (a member died):
//              the first to write it records the aggregate in `result`. A pod of the job that
//              arrives later reuses it within the TTL, as a lone pod reuses iogate.io/probe-result.
// A pod that arrives while the job probes waits for `done` and reuses it. A job whose gathering
// closed with one member and no expected count is no job: the record is removed and that pod
// probes as a lone pod (the PVC's probe lock). Records never mix: a lone pod reads only
// iogate.io/probe-result, a job only its own key.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"
#include "kube/pvc_reader.h"

namespace iogate {

inline constexpr const char* kJobProbeAnnotationPrefix = "iogate.io/job-probe.";
// A barrier not done this long past its `expires` (by the reader's clock) was abandoned.
inline constexpr std::chrono::minutes kJobBarrierSkewAllowance{1};

// iogate.io/job-probe.<16 hex digits of FNV-1a 64 of the key>: an annotation name is at most 63
// characters, a job's key is not.
std::string job_probe_annotation(const std::string& job_key);

// job_barrier_state_name gives "gathering", "probing", "done".
enum class BarrierState { kGathering, kProbing, kDone };
std::string_view job_barrier_state_name(BarrierState s);

// What one member measured in the window.
struct MemberFigures {
  double samples_per_s = 0, bytes_per_s = 0, iops = 0, p99_latency_ns = 0;
  bool operator==(const MemberFigures&) const = default;
};

struct BarrierMember {
  std::string pod, node;  // "namespace/name"
  int gpus = 0;           // its accelerators (a pod with none counts as one in the demand)
  bool reported = false;
  MemberFigures figures;  // when reported without error
  std::string error;      // reported, but could not measure
  bool operator==(const BarrierMember&) const = default;
};

struct JobBarrier {
  std::string job;       // JobIdentity::key
  std::string workload;  // the workload's key: a done result is reused only for the same one
  int expected = 0;      // iogate.io/job-pods; 0: not said
  BarrierState state = BarrierState::kGathering;
  std::chrono::system_clock::time_point opened;      // by the first member's clock
  std::chrono::milliseconds gather{0};               // the gathering's length after `opened`
  std::chrono::system_clock::time_point expires;     // not done by then (opener's clock): abandoned
  std::chrono::system_clock::time_point closed;      // when probing began (closer's clock)
  std::chrono::milliseconds window{0};               // the probe every member runs (set at close)
  uint64_t seed = 0;                                 // shared by the members (a dataset's sample order)
  std::vector<BarrierMember> members;                // in order of arrival: a member's shard index
  std::chrono::system_clock::time_point finished;    // done
  nlohmann::json result = nlohmann::json::object();  // done: the aggregate as its recorder stored it

  bool operator==(const JobBarrier&) const = default;
};

std::optional<JobBarrier> job_barrier_on(const nlohmann::json& pvc, const std::string& annotation);
nlohmann::json job_barrier_to_json(const JobBarrier& b);

// --- pure decisions ---

// The member's index in `b.members`, or -1.
int member_index(const JobBarrier& b, const std::string& pod);
bool barrier_full(const JobBarrier& b);
bool all_reported(const JobBarrier& b);
// Whether the gathering is over at `now` by the opener's clock, or `gather` after `first_seen`
// by ours (steady): a skewed clock can shorten a gathering only to what we saw of it.
bool gathering_over(const JobBarrier& b, std::chrono::system_clock::time_point now,
                    std::chrono::steady_clock::duration seen_for);
// A barrier that never got done (every member gone): the next pod of the job starts a new one.
bool barrier_abandoned(const JobBarrier& b, std::chrono::system_clock::time_point now);
// Whether a done barrier's result stands in for a job probe now: same workload and expected
// count, not older than `ttl`, not from the future.
bool job_result_reusable(const JobBarrier& b, const std::string& workload, int expected, std::chrono::nanoseconds ttl,
                         std::chrono::system_clock::time_point now);

// The job's figures: sums over the members that reported figures, the slowest p99, and the
// accelerators the job's demand counts. The demand counts every listed member's GPUs (one for a
// member with none); where fewer members met than `expected`, each missing one counts as many
// as the most any member has.
struct JobAggregate {
  int members = 0, reported = 0, failed = 0;  // listed; reported figures; reported an error
  int missing = 0;                            // expected but never arrived
  MemberFigures sum;                          // p99_latency_ns: the largest
  int demand_gpus = 0;
  std::string demand_from;  // "4 members × their GPUs", "3 members' GPUs + 1 missing × 2"
};
JobAggregate aggregate_job(const JobBarrier& b);

// --- on the API ---

struct JobBarrierRequest {
  PvcRef pvc;
  std::string annotation;           // job_probe_annotation(job key)
  JobBarrier fresh;                 // what a first member writes: job, workload, expected, gather
  std::chrono::nanoseconds life{};  // a barrier not done this long after it opened is abandoned
  BarrierMember self;
  std::chrono::milliseconds window{0};  // what a closer writes as the window
  std::chrono::nanoseconds ttl{};       // of a done result
  std::chrono::steady_clock::time_point wait_until;
  std::chrono::milliseconds poll_interval{1000};
  const std::atomic<bool>* stop = nullptr;
};

enum class JoinAction {
  kReuse,        // `barrier` is done and fresh: judge its result
  kProbe,        // we are members[index] of `barrier`, now probing: probe for its window
  kAlone,        // the gathering closed with us alone and no expected count: probe as a lone pod
  kTimedOut,     // the job was still gathering or probing at wait_until
  kInterrupted,  // stop rose
};

struct JoinDecision {
  JoinAction action = JoinAction::kProbe;
  JobBarrier barrier;
  int index = -1;
  std::string why;  // one line for the log
};

// Joins the job's barrier on the PVC (opening it, adding us, closing it when due) and waits on a
// watch of the PVC for the close or for a done result. Errors are API errors; the caller decides.
ApiResult<JoinDecision> join_job_barrier(ApiClient& api, const JobBarrierRequest& request);

// Adds our figures (or our error) to the probing barrier, waits until every member reported or
// `report_until`, then writes it done with `result_of(barrier)` unless another member did first.
// Returns the done barrier: every member judges the same one.
ApiResult<JobBarrier> report_and_finish(ApiClient& api, const JobBarrierRequest& request, const BarrierMember& self,
                                        std::chrono::steady_clock::time_point report_until,
                                        const std::function<nlohmann::json(const JobBarrier&)>& result_of);

}  // namespace iogate
