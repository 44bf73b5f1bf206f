#include "kube/job_barrier.h"

#include <algorithm>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/json_fields.h"

namespace iogate {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;
using Steady = std::chrono::steady_clock;

// How long a member waits on the watch before reading the PVC itself: a write of another member
// comes on the watch at once; this only bounds a silent one (a stalled watch).
constexpr std::chrono::seconds kBarrierSilence{3};

std::optional<BarrierState> state_named(const std::string& s) {
  for (BarrierState b : {BarrierState::kGathering, BarrierState::kProbing, BarrierState::kDone}) {
    if (job_barrier_state_name(b) == s) return b;
  }
  return std::nullopt;
}

double number_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

int64_t integer_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

system_clock::time_point as_written(system_clock::time_point t) {
  return std::chrono::floor<std::chrono::microseconds>(t);
}

std::optional<system_clock::time_point> time_at(const nlohmann::json& j, const char* key) {
  return parse_rfc3339_utc(string_at(j, key));
}

nlohmann::json member_to_json(const BarrierMember& m) {
  nlohmann::json j = {{"pod", m.pod}, {"node", m.node}, {"gpus", m.gpus}, {"reported", m.reported}};
  if (m.reported && m.error.empty()) {
    j["samples_per_s"] = m.figures.samples_per_s;
    j["bytes_per_s"] = m.figures.bytes_per_s;
    j["iops"] = m.figures.iops;
    j["p99_latency_ns"] = m.figures.p99_latency_ns;
  }
  if (!m.error.empty()) j["error"] = m.error;
  return j;
}

// The write of `b` over the version of the PVC that was read: a 409 when anyone wrote meanwhile.
ApiResult<nlohmann::json> write_barrier(ApiClient& api, const PvcRef& pvc, const std::string& annotation,
                                        const std::string& resource_version, const std::optional<JobBarrier>& b) {
  nlohmann::json value = b ? nlohmann::json(job_barrier_to_json(*b).dump()) : nlohmann::json(nullptr);
  nlohmann::json patch = {
      {"metadata", {{"resourceVersion", resource_version}, {"annotations", {{annotation, value}}}}}};
  return api.patch(pvc_path(pvc), PatchType::kMerge, patch);
}

uint64_t fresh_barrier_seed() {
  std::random_device rd;
  return ((uint64_t(rd()) << 32) ^ rd()) & ((uint64_t{1} << 53) - 1);  // read back as a double by jq
}

std::string members_text(const JobBarrier& b) {
  return fmt::format("{} member{}{}", b.members.size(), b.members.size() == 1 ? "" : "s",
                     b.expected ? fmt::format(" of {}", b.expected) : "");
}

}  // namespace

std::string job_probe_annotation(const std::string& job_key) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : job_key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{}{:016x}", kJobProbeAnnotationPrefix, h);
}

std::string_view job_barrier_state_name(BarrierState s) {
  switch (s) {
    case BarrierState::kGathering: return "gathering";
    case BarrierState::kProbing: return "probing";
    case BarrierState::kDone: return "done";
  }
  return "gathering";
}

std::optional<JobBarrier> job_barrier_on(const nlohmann::json& pvc, const std::string& annotation) {
  std::string text = string_at(object_at(object_at(pvc, "metadata"), "annotations"), annotation.c_str());
  if (text.empty()) return std::nullopt;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  JobBarrier b;
  b.job = string_at(j, "job");
  b.workload = string_at(j, "workload");
  b.expected = int(std::clamp<int64_t>(integer_at(j, "expected"), 0, 1 << 20));
  auto state = state_named(string_at(j, "state"));
  auto opened = time_at(j, "opened");
  auto expires = time_at(j, "expires");
  if (b.job.empty() || !state || !opened || !expires) return std::nullopt;
  b.state = *state;
  b.opened = *opened;
  b.expires = *expires;
  b.gather = milliseconds(std::max<int64_t>(0, integer_at(j, "gather_ms")));
  b.window = milliseconds(std::max<int64_t>(0, integer_at(j, "window_ms")));
  if (auto it = j.find("seed"); it != j.end() && it->is_number_unsigned()) b.seed = it->get<uint64_t>();
  for (const auto& m : array_at(j, "members")) {
    BarrierMember member;
    member.pod = string_at(m, "pod");
    member.node = string_at(m, "node");
    member.gpus = int(std::clamp<int64_t>(integer_at(m, "gpus"), 0, 1'000'000));
    auto reported = m.find("reported");
    member.reported = reported != m.end() && reported->is_boolean() && reported->get<bool>();
    member.figures = {number_at(m, "samples_per_s"), number_at(m, "bytes_per_s"), number_at(m, "iops"),
                      number_at(m, "p99_latency_ns")};
    member.error = string_at(m, "error");
    if (member.pod.empty()) return std::nullopt;
    b.members.push_back(std::move(member));
  }
  if (b.members.empty()) return std::nullopt;
  if (b.state != BarrierState::kGathering) {
    auto closed = time_at(j, "closed");
    if (!closed || b.window <= milliseconds::zero()) return std::nullopt;
    b.closed = *closed;
  }
  if (b.state == BarrierState::kDone) {
    auto finished = time_at(j, "finished");
    const nlohmann::json& result = object_at(j, "result");
    if (!finished || result.empty()) return std::nullopt;
    b.finished = *finished;
    b.result = result;
  }
  return b;
}

nlohmann::json job_barrier_to_json(const JobBarrier& b) {
  nlohmann::json members = nlohmann::json::array();
  for (const BarrierMember& m : b.members) members.push_back(member_to_json(m));
  nlohmann::json j = {{"job", b.job},
                      {"workload", b.workload},
                      {"expected", b.expected},
                      {"state", job_barrier_state_name(b.state)},
                      {"opened", rfc3339_micro(b.opened)},
                      {"gather_ms", b.gather.count()},
                      {"expires", rfc3339_micro(b.expires)},
                      {"members", members}};
  if (b.state != BarrierState::kGathering) {
    j["closed"] = rfc3339_micro(b.closed);
    j["window_ms"] = b.window.count();
    j["seed"] = b.seed;
  }
  if (b.state == BarrierState::kDone) {
    j["finished"] = rfc3339_micro(b.finished);
    j["result"] = b.result;
  }
  return j;
}

int member_index(const JobBarrier& b, const std::string& pod) {
  for (size_t i = 0; i < b.members.size(); ++i) {
    if (b.members[i].pod == pod) return int(i);
  }
  return -1;
}

bool barrier_full(const JobBarrier& b) { return b.expected > 0 && int(b.members.size()) >= b.expected; }

bool all_reported(const JobBarrier& b) {
  return std::all_of(b.members.begin(), b.members.end(), [](const BarrierMember& m) { return m.reported; });
}

bool gathering_over(const JobBarrier& b, system_clock::time_point now, Steady::duration seen_for) {
  return now >= b.opened + b.gather || seen_for >= b.gather;
}

bool barrier_abandoned(const JobBarrier& b, system_clock::time_point now) {
  return b.state != BarrierState::kDone && now > b.expires + kJobBarrierSkewAllowance;
}

bool job_result_reusable(const JobBarrier& b, const std::string& workload, int expected, std::chrono::nanoseconds ttl,
                         system_clock::time_point now) {
  if (b.state != BarrierState::kDone || b.workload != workload || b.expected != expected) return false;
  if (ttl <= std::chrono::nanoseconds::zero() || b.finished > now + kJobBarrierSkewAllowance) return false;
  return now - b.finished < ttl;
}

JobAggregate aggregate_job(const JobBarrier& b) {
  JobAggregate a;
  a.members = int(b.members.size());
  int most_gpus = 1, listed_gpus = 0;
  for (const BarrierMember& m : b.members) {
    const int g = std::max(1, m.gpus);  // a member without GPUs is judged as one accelerator
    listed_gpus += g;
    most_gpus = std::max(most_gpus, g);
    if (!m.reported) continue;
    if (!m.error.empty()) {
      ++a.failed;
      continue;
    }
    ++a.reported;
    a.sum.samples_per_s += m.figures.samples_per_s;
    a.sum.bytes_per_s += m.figures.bytes_per_s;
    a.sum.iops += m.figures.iops;
    a.sum.p99_latency_ns = std::max(a.sum.p99_latency_ns, m.figures.p99_latency_ns);
  }
  a.missing = std::max(0, b.expected - a.members);
  a.demand_gpus = listed_gpus + a.missing * most_gpus;
  a.demand_from =
      a.missing ? fmt::format("{} members' GPUs ({}) + {} missing × {}", a.members, listed_gpus, a.missing, most_gpus)
                : fmt::format("{} members' GPUs", a.members);
  return a;
}

ApiResult<JoinDecision> join_job_barrier(ApiClient& api, const JobBarrierRequest& req) {
  PvcReader reader(api, req.pvc, req.stop, req.poll_interval);
  const std::string& pod = req.self.pod;
  std::optional<Steady::time_point> first_seen;  // of the gathering we are in, by our clock
  bool announced_late = false, reread = false;
  Steady::duration silence = kBarrierSilence;  // cut to a gathering's end while we are in it
  for (;;) {
    auto got = reread && !reader.watching() ? reader.read_now() : reader.next(req.wait_until, silence);
    silence = kBarrierSilence;
    reread = false;
    if (!got.ok()) return got.error();
    if (!*got) {
      JoinDecision d;
      d.action = req.stop && req.stop->load() ? JoinAction::kInterrupted : JoinAction::kTimedOut;
      d.why = d.action == JoinAction::kInterrupted
                  ? fmt::format("PVC {}: stopped waiting for job {}: interrupted", req.pvc.name, req.fresh.job)
                  : fmt::format("PVC {}: job {} still gathering or probing when our time to wait ran out", req.pvc.name,
                                req.fresh.job);
      return d;
    }
    const nlohmann::json& pvc = (*got)->pvc;
    const std::string rv = resource_version_of(pvc);
    const auto now = system_clock::now();
    std::optional<JobBarrier> b = job_barrier_on(pvc, req.annotation);

    if (b && b->state == BarrierState::kDone) {
      if (job_result_reusable(*b, req.fresh.workload, req.fresh.expected, req.ttl, now)) {
        JoinDecision d;
        d.action = JoinAction::kReuse;
        d.index = member_index(*b, pod);
        d.why = fmt::format("PVC {}: reusing job {}'s result ({} members measured it together)", req.pvc.name, b->job,
                            b->members.size());
        d.barrier = std::move(*b);
        return d;
      }
    }
    const bool replace = !b || b->state == BarrierState::kDone || barrier_abandoned(*b, now);
    if (replace) {
      JobBarrier fresh = req.fresh;
      fresh.state = BarrierState::kGathering;
      fresh.opened = as_written(now);
      fresh.expires = as_written(now + std::chrono::duration_cast<system_clock::duration>(req.life));
      fresh.members = {req.self};
      auto written = write_barrier(api, req.pvc, req.annotation, rv, fresh);
      if (!written.ok()) {
        if (!written.error().conflict()) return written.error();
        reread = true;
        continue;
      }
      first_seen = Steady::now();
      spdlog::info("PVC {}: opened the barrier of job {} ({} expected), gathering for {} ms", req.pvc.name, fresh.job,
                   fresh.expected ? std::to_string(fresh.expected) : "?", fresh.gather.count());
      continue;  // our write comes back on the watch; it may already be full (a job of one)
    }

    const int index = member_index(*b, pod);
    if (b->state == BarrierState::kProbing) {
      if (index >= 0) {
        JoinDecision d;
        d.action = JoinAction::kProbe;
        d.index = index;
        d.why = fmt::format("PVC {}: job {} probes with {} for {} ms; we are member {}", req.pvc.name, b->job,
                            members_text(*b), b->window.count(), index);
        d.barrier = std::move(*b);
        return d;
      }
      if (!announced_late) {
        spdlog::info("PVC {}: job {} is probing with {} (we came too late); waiting for its result", req.pvc.name,
                     b->job, members_text(*b));
        announced_late = true;
      }
      continue;
    }

    // Gathering.
    if (index < 0) {
      JobBarrier joined = *b;
      joined.members.push_back(req.self);
      auto written = write_barrier(api, req.pvc, req.annotation, rv, joined);
      if (!written.ok()) {
        if (!written.error().conflict()) return written.error();
        reread = true;
        continue;
      }
      first_seen = Steady::now();
      spdlog::info("PVC {}: joined job {}'s barrier as member {} ({})", req.pvc.name, b->job, joined.members.size() - 1,
                   members_text(joined));
      continue;
    }
    if (!first_seen) first_seen = Steady::now();  // ours from an earlier life of this pod
    if (barrier_full(*b) || gathering_over(*b, now, Steady::now() - *first_seen)) {
      if (b->members.size() == 1 && b->expected == 0) {
        // No one else came: not a job to measure together. Our record goes; we probe alone.
        auto removed = write_barrier(api, req.pvc, req.annotation, rv, std::nullopt);
        if (!removed.ok()) {
          if (!removed.error().conflict()) return removed.error();
          reread = true;
          continue;
        }
        JoinDecision d;
        d.action = JoinAction::kAlone;
        d.index = 0;
        d.why = fmt::format("PVC {}: no other pod of job {} arrived within {} ms; probing as a lone pod", req.pvc.name,
                            b->job, b->gather.count());
        return d;
      }
      JobBarrier closed = *b;
      closed.state = BarrierState::kProbing;
      closed.closed = as_written(now);
      closed.window = req.window;
      closed.seed = fresh_barrier_seed();
      auto written = write_barrier(api, req.pvc, req.annotation, rv, closed);
      if (!written.ok()) {
        if (!written.error().conflict()) return written.error();
        reread = true;
        continue;
      }
      spdlog::info("PVC {}: closed job {}'s barrier with {}{}", req.pvc.name, b->job, members_text(closed),
                   barrier_full(*b) ? "" : " (its gather window passed)");
      continue;  // the close comes back on the watch: every member starts on the same event
    }
    // Wait for the next member, or for the window to pass: the watch is silent in between, so
    // the wait is cut to the window's end, where a read closes it.
    const Steady::time_point by_opener =
        Steady::now() + std::chrono::duration_cast<Steady::duration>(b->opened + b->gather - now);
    const Steady::duration left = std::min(by_opener, *first_seen + b->gather) - Steady::now();
    silence = std::clamp<Steady::duration>(left, milliseconds(50), kBarrierSilence);
  }
}

ApiResult<JobBarrier> report_and_finish(ApiClient& api, const JobBarrierRequest& req, const BarrierMember& self,
                                        Steady::time_point report_until,
                                        const std::function<nlohmann::json(const JobBarrier&)>& result_of) {
  PvcReader reader(api, req.pvc, req.stop, req.poll_interval);
  bool reported = false, reread = false;
  for (;;) {
    auto got = reread && !reader.watching() ? reader.read_now()
                                            : reader.next(std::min(report_until, req.wait_until), kBarrierSilence);
    reread = false;
    if (!got.ok()) return got.error();
    const bool times_up = !*got;
    if (times_up) {
      if (req.stop && req.stop->load())
        return ApiError{"WATCH " + pvc_path(req.pvc), 0, "Stopped", "interrupted while waiting for the job's members"};
      // Past the report deadline: finish with who reported, reading the barrier once more.
      got = reader.read_now();
      if (!got.ok()) return got.error();
      if (!*got) return ApiError{"GET " + pvc_path(req.pvc), 0, "DeadlineExceeded", "no time left to read the PVC"};
    }
    const nlohmann::json& pvc = (*got)->pvc;
    const std::string rv = resource_version_of(pvc);
    std::optional<JobBarrier> b = job_barrier_on(pvc, req.annotation);
    if (!b || b->state == BarrierState::kGathering || b->job != req.fresh.job)
      return ApiError{"GET " + pvc_path(req.pvc), 0, "Conflict",
                      "the job's barrier was removed or replaced while probing"};
    if (b->state == BarrierState::kDone) return std::move(*b);
    const int index = member_index(*b, self.pod);
    if (index < 0)
      return ApiError{"GET " + pvc_path(req.pvc), 0, "Conflict", "we are no member of the job's barrier any more"};
    if (!reported || !b->members[index].reported) {
      JobBarrier with_ours = *b;
      with_ours.members[index] = self;
      with_ours.members[index].reported = true;
      auto written = write_barrier(api, req.pvc, req.annotation, rv, with_ours);
      if (!written.ok()) {
        if (!written.error().conflict()) return written.error();
        reread = true;
        continue;
      }
      reported = true;
      spdlog::info("PVC {}: reported our figures to job {} ({} of {} reported)", req.pvc.name, b->job,
                   std::count_if(with_ours.members.begin(), with_ours.members.end(),
                                 [](const BarrierMember& m) { return m.reported; }),
                   with_ours.members.size());
      continue;
    }
    if (!all_reported(*b) && Steady::now() < report_until) continue;
    JobBarrier done = *b;
    done.state = BarrierState::kDone;
    done.finished = as_written(system_clock::now());
    done.result = result_of(done);
    auto written = write_barrier(api, req.pvc, req.annotation, rv, done);
    if (!written.ok()) {
      if (!written.error().conflict()) return written.error();
      reread = true;
      continue;
    }
    const JobAggregate a = aggregate_job(done);
    spdlog::info("PVC {}: recorded job {}'s result: {} of {} members reported", req.pvc.name, done.job, a.reported,
                 a.members);
    return done;
  }
}

}  // namespace iogate
