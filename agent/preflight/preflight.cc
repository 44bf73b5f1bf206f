#include "preflight/preflight.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/exit_codes.h"
#include "base/json_fields.h"
#include "base/units.h"
#include "device/storage_stack.h"
#include "kube/api_client.h"
#include "kube/connect.h"
#include "kube/job_barrier.h"
#include "kube/job_identity.h"
#include "kube/operations.h"
#include "kube/shared_result.h"
#include "measure/checkpoint_measure.h"
#include "measure/measurement_from.h"
#include "measure/measurement_json.h"
#include "measure/measurement_plan.h"
#include "measure/policy_probe.h"
#include "policy/evaluate.h"
#include "policy/policy.h"
#include "preflight/job_wide.h"
#include "preflight/preflight_records.h"
#include "probe/probe.h"

namespace iogate {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Time kept back from the deadline for writing the results to the API: a verdict nobody records
// is a verdict lost.
constexpr nanoseconds kRecordReserve = std::chrono::seconds(3);
// Writing and filling the test file before the measurement starts (256 MiB at 100 MB/s and more).
constexpr nanoseconds kPrepareAllowance = std::chrono::seconds(3);
constexpr nanoseconds kMinProbeRuntime = std::chrono::seconds(1);
// How long after its own window a job's member waits for the others' figures before judging
// the job with those that reported: a member's probe ends with work past the window (a dataset
// probe's limit finding, its sizes), and a member that died must not hold the others forever.
constexpr nanoseconds kJobReportGrace = std::chrono::seconds(20);

std::string seconds_text(nanoseconds d) { return format_duration_compact(d.count()); }

// Raises `out` when a signal arrives, `until` passes or `also` rises (a lost probe lock), so the
// probe, which watches one flag, stops for any; `deadline_hit` tells the deadline apart.
class DeadlineWatch {
 public:
  DeadlineWatch(const std::atomic<bool>& signal, Clock::time_point until, const std::atomic<bool>* also)
      : signal_(signal), also_(also), until_(until) {
    thread_ = std::thread([this] {
      while (!done_.load()) {
        if (signal_.load() || (also_ && also_->load())) {
          out_ = true;
          return;
        }
        if (Clock::now() >= until_) {
          deadline_hit_ = true;
          out_ = true;
          return;
        }
        std::this_thread::sleep_for(milliseconds(20));
      }
    });
  }
  ~DeadlineWatch() {
    done_ = true;
    thread_.join();
  }
  DeadlineWatch(const DeadlineWatch&) = delete;
  DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  const std::atomic<bool>& flag() const { return out_; }
  bool deadline_hit() const { return deadline_hit_.load(); }

 private:
  const std::atomic<bool>& signal_;
  const std::atomic<bool>* also_;
  Clock::time_point until_;
  std::atomic<bool> out_{false}, done_{false}, deadline_hit_{false};
  std::thread thread_;
};

// Everything one run knows; the records are built from `summary`.
struct Run {
  const PreflightOptions& options;
  const std::atomic<bool>& stop;
  Policy policy;
  Clock::time_point deadline;
  std::unique_ptr<ApiClient> api;  // null: API skipped (summary.api says why)
  nlohmann::json pod;              // empty without the API
  std::map<std::string, std::string> pod_labels;
  PreflightSummary summary;
  // How the path being judged is measured (measure/measurement_plan.h).
  MeasurementPlan plan;
  std::optional<JobIdentity> job;  // the pod's job, from its pod object
};

// How a member of a job probes: the barrier's window for everyone, no early stop (a member that
// stopped early would leave the others a server less loaded), and for a dataset its share of
// the files in an order the members share, as a DistributedSampler gives each rank its own.
struct JobProbe {
  nanoseconds window{};
  uint64_t seed = 0;
  size_t shard = 0, shards = 1;
};

// What the probe of the path being judged runs, and the key its shared result is recorded under.
Workload probed_workload(const Run& run) { return planned_workload(run.policy, run.plan); }

std::string pod_ref(const Run& run) { return run.summary.pod_namespace + "/" + run.summary.pod_name; }

// Connects to the API when there is one and the pod is known; the pod's namespace defaults to the
// cluster's. Configuration errors of a kubeconfig the user named are usage errors; anything else
// is an API failure under on_error.
Status connect(Run& run) {
  const PreflightOptions& o = run.options;
  PreflightSummary& s = run.summary;
  ApiConnectOptions c;
  c.kubeconfig = o.kubeconfig;
  c.context = o.kube_context;
  c.no_api = o.no_api;
  if (s.pod_name.empty()) c.decline = "POD_NAME is not set (set it from the downward API: fieldRef metadata.name)";
  c.deadline = run.deadline;
  auto api = connect_api(c);
  if (!api.ok()) return api.error();
  if (s.pod_namespace.empty() && !api->namespace_name.empty()) s.pod_namespace = api->namespace_name;
  if (!api->client) {
    s.api = "skipped: " + api->skipped;
    if (api->skip == ApiSkip::kDeclined) spdlog::warn("{}: the verdict gates the pod but is recorded nowhere", s.api);
    return ok_status();
  }
  run.api = std::move(api->client);
  s.api = "ok";
  return ok_status();
}

Status read_pod(Run& run) {
  PreflightSummary& s = run.summary;
  if (run.api) {
    auto pod = get_pod(*run.api, s.pod_namespace, s.pod_name);
    if (!pod.ok()) return pod.error().to_error();
    run.pod = std::move(*pod);
    for (const auto& [k, v] : object_at(object_at(run.pod, "metadata"), "labels").items()) {
      if (v.is_string()) run.pod_labels[k] = v.get<std::string>();
    }
    if (s.node_name.empty()) s.node_name = string_at(object_at(run.pod, "spec"), "nodeName");
    auto job = job_of_pod(run.pod);
    if (!job.ok()) return job.error();
    run.job = std::move(*job);
    if (run.job) {
      spdlog::info("pod {}: of {} (by {}), {} pods{}", pod_ref(run), run.job->describe(),
                   job_source_name(run.job->source),
                   run.job->expected_pods ? std::to_string(run.job->expected_pods) : "?",
                   measured_as_job(run.job) ? "" : ": a job of one, probed as a lone pod");
    }
  }
  if (run.options.gpus) {
    s.gpus = *run.options.gpus;
    s.gpus_from = "--gpus";
  } else if (run.api) {
    s.gpus = pod_gpu_count(run.pod);
    s.gpus_from = "pod";
  } else {
    s.gpus = 0;
    s.gpus_from = "unknown (no API; pass --gpus)";
  }
  spdlog::info("pod {} on node {}: {} GPU{} ({})", run.api ? pod_ref(run) : "(none)",
               s.node_name.empty() ? "?" : s.node_name, s.gpus, s.gpus == 1 ? "" : "s", s.gpus_from);
  return ok_status();
}

// The measured time the deadline leaves `path`'s probe after `before` (its ramp or scan, and the
// test file): `runtime`, cut with a warning where less is left, or an error where too little is.
Result<nanoseconds> runtime_within_deadline(const Run& run, const std::string& path, nanoseconds before,
                                            nanoseconds runtime, std::string_view work) {
  const Policy& p = run.policy;
  // Whole milliseconds: a runtime is read and printed by people.
  nanoseconds left = std::chrono::floor<milliseconds>(run.deadline - Clock::now() - kRecordReserve);
  nanoseconds room = left - before;
  if (room < kMinProbeRuntime) {
    return runtime_error(fmt::format("deadline {}: only {} left, too little to {} {}", seconds_text(p.deadline),
                                     format_duration_ns(double(std::max(left, nanoseconds::zero()).count())), work,
                                     path));
  }
  if (room >= runtime) return runtime;
  spdlog::warn("{}: runtime limit cut from {} to {} to finish within the deadline {}", path,
               format_duration_ns(double(runtime.count())), format_duration_ns(double(room.count())),
               seconds_text(p.deadline));
  return room;
}

// Runs `probe` with a stop flag that the deadline raises as well as a signal or `lock_lost`; a
// run cut short is an error, since its figures cover part of the workload.
template <typename Probe>
auto run_within_deadline(Run& run, const std::string& path, Probe probe, const std::atomic<bool>* lock_lost = nullptr) {
  DeadlineWatch watch(run.stop, run.deadline - kRecordReserve, lock_lost);
  auto result = probe(watch.flag());
  using R = decltype(result);
  if (lock_lost && lock_lost->load()) return R(runtime_error("lost the PVC's probe lock while probing " + path));
  if (watch.deadline_hit()) {
    return R(
        runtime_error(fmt::format("deadline {} reached while probing {}", seconds_text(run.policy.deadline), path)));
  }
  if (result.ok() && result->stop_reason == StopReason::kSignal)
    return R(runtime_error("interrupted by a signal while probing " + path));
  return result;
}

// The class is known before the probe (detect is cheap), so the early stop knows which floor
// applies to this volume; the probe reports the same stack.
std::optional<StorageStack> detect_path(const Run& run, const std::string& path) {
  auto stack = detect_storage_stack(path, DetectOptions{run.options.root});
  if (!stack.ok()) return std::nullopt;
  return std::move(*stack);
}

// The probe for one path, with the workload's runtime cut to what the deadline leaves; stopped
// when `lock_lost` rises.
Result<ProbeResult> probe_path(Run& run, const std::string& path, const EvaluationContext& ctx,
                               const std::atomic<bool>* lock_lost, const JobProbe* job = nullptr) {
  const std::optional<StorageStack> stack = detect_path(run, path);
  const StorageStack* detected = stack ? &*stack : nullptr;
  ProbeRequest req = planned_probe_request(run.policy, run.plan, path, run.options.root, ctx, detected);
  Workload& w = req.workload;
  if (job) {
    w.runtime = job->window;
    req.early_stop.enabled = false;
  }
  auto runtime = runtime_within_deadline(run, path, kPrepareAllowance + w.ramp, w.runtime, "probe");
  if (!runtime.ok()) return runtime.error();
  w.runtime = *runtime;
  spdlog::info("{}: probing {}{}", path, run.plan.synthetic ? "synthetic samples: " : "",
               describe_probe_request(run.policy, req));
  return run_within_deadline(
      run, path, [&](const std::atomic<bool>& stop) { return run_probe(req, stop, nullptr); }, lock_lost);
}

// The dataset probe for one path (workload.mode: dataset), its scan and loader limits cut to what
// the deadline leaves. The scan budget comes first: without files there is nothing to load.
Result<DatasetProbeResult> probe_dataset_path(Run& run, const std::string& path, const EvaluationContext& ctx,
                                              const JobProbe* job = nullptr) {
  const std::optional<StorageStack> stack = detect_path(run, path);
  DatasetRequest req = policy_dataset_request(run.policy, path, run.options.root, ctx, stack ? &*stack : nullptr);
  if (job) {
    req.loader.runtime = job->window;
    req.loader.early_stop.enabled = false;
    req.seed = job->seed;
    req.shard = job->shard;
    req.shards = job->shards;
  }
  auto runtime = runtime_within_deadline(run, path, req.scan.time, req.loader.runtime, "scan and read");
  if (!runtime.ok()) return runtime.error();
  req.loader.runtime = *runtime;
  spdlog::info("{}: probing {}", path, describe_dataset_request(req));
  return run_within_deadline(run, path,
                             [&](const std::atomic<bool>& stop) { return run_dataset_probe(req, stop, nullptr); });
}

std::string shared_origin(const RecordedResult& r) {
  return fmt::format("pod {} on node {} at {}", r.pod, r.node, rfc3339_seconds(r.time));
}

// Whether an API error from sharing means this pod cannot share through its PVC at all (no RBAC
// for PVCs, the claim gone): it then probes alone, as it would without a PVC. Any other failure
// (the deadline, an API that stopped answering) fails the run instead: a probe then could run
// beside a live holder's and measure both.
bool sharing_unavailable(const ApiError& e) { return e.http_status == 403 || e.http_status == 404; }

// The renewer's own client (kube/shared_result.h): each attempt bounded by the renew period, so
// that stopping the renewer after the probe waits at most that long.
std::unique_ptr<ApiClient> renewal_client(const Run& run, const ProbeLock& lock) {
  RetryPolicy retry;
  retry.request_timeout = lease_renew_period(lock);
  auto api = std::make_unique<ApiClient>(run.api->config(), retry);
  api->set_deadline(run.deadline);
  return api;
}

// A path's result from our own probe.
PathResult probed_result(const Run& run, const std::string& path, const EvaluationContext& ctx, ProbeResult probe) {
  PathResult out;
  out.path = path;
  out.source = ResultSource::kProbe;
  out.measurement = planned_measurement(run.plan, probe);
  out.probe = std::move(probe);
  out.verdict = evaluate_policy(run.policy, out.measurement, ctx);
  spdlog::info("{}: {} in {:.1f} s ({})", path, measurement_figures(out.measurement), out.measurement.measured_s,
               stop_reason_name(out.measurement.stop_reason));
  return out;
}

Result<PathResult> probe_alone(Run& run, const std::string& path, const EvaluationContext& ctx) {
  auto probe = probe_path(run, path, ctx, nullptr);
  if (!probe.ok()) return probe.error();
  return probed_result(run, path, ctx, std::move(*probe));
}

// Probes under the PVC's lock, renewed while the probe runs, and records the result for the
// next pods. Nullopt when another pod took the lock over meanwhile: the probe stopped, and the
// caller waits for that pod's result.
Result<std::optional<PathResult>> probe_locked(Run& run, const std::string& path, const EvaluationContext& ctx,
                                               const PvcRef& pvc, const ProbeLock& lock) {
  auto renewer = std::make_unique<ProbeLeaseRenewer>(renewal_client(run, lock), pvc, lock);
  auto probe = probe_path(run, path, ctx, &renewer->lost());
  const bool lost = renewer->lost().load();
  const std::string taken_by = renewer->taken_by();
  renewer.reset();  // no renewal after this: the run's client writes the PVC next
  if (lost) {
    spdlog::warn(
        "PVC {}: pod {} took the probe lock over (our renewals failed for a whole lease); our probe "
        "stopped, waiting for its result",
        pvc.name, taken_by);
    return std::optional<PathResult>();
  }
  if (!probe.ok()) {
    auto released = release_probe_lock(*run.api, pvc, lock.pod);
    if (!released.ok())
      spdlog::warn("PVC {}: could not release the probe lock: {}", pvc.name, released.error().summary());
    return probe.error();
  }
  PathResult out = probed_result(run, path, ctx, std::move(*probe));
  RecordedResult rec{workload_key(probed_workload(run)), run.summary.node_name, pod_ref(run),
                     std::chrono::system_clock::now(), measurement_to_json(out.measurement)};
  auto recorded = record_shared_result(*run.api, pvc, rec);
  if (!recorded.ok()) spdlog::warn("PVC {}: could not record the result: {}", pvc.name, recorded.error().summary());
  return std::optional<PathResult>(std::move(out));
}

// What a member reports to its job.
MemberFigures figures_of(const Measurement& m) {
  return {m.samples_per_s, m.bandwidth_bytes_per_s, m.iops, m.p99_latency_ns};
}

// A path judged on its job's recorded result: the members' sum, for the whole job's GPUs.
Result<PathResult> job_path_result(const Run& run, const std::string& path, const EvaluationContext& ctx,
                                   const PvcRef& pvc, const JobBarrier& done, int index, ResultSource source) {
  auto m = measurement_from_json(done.result);
  if (!m) return runtime_error(fmt::format("PVC {}: the result recorded for job {} is unreadable", pvc.name, done.job));
  PathResult out;
  out.path = path;
  out.pvc = pvc.name;
  out.source = source;
  out.measurement = *m;
  out.measurement.path = path;
  out.job = job_result_of(done, run.job->describe(), std::string(job_source_name(run.job->source)), index);
  EvaluationContext job_ctx = ctx;
  job_ctx.gpus = out.job->aggregate.demand_gpus;
  out.verdict = evaluate_policy(run.policy, out.measurement, job_ctx);
  const JobAggregate& a = out.job->aggregate;
  spdlog::info("{}: job {}: {} together ({} of {} members reported), judged for the job's {} GPUs ({})", path, done.job,
               measurement_figures(out.measurement), a.reported, a.members, a.demand_gpus, a.demand_from);
  return out;
}

// One path measured together with the other pods of the job (kube/job_barrier.h): meet on the
// PVC, probe for the barrier's window, report, judge the sum. Nullopt where the pod probes as a
// lone pod after all: no other member came, or this account cannot write the PVC.
Result<std::optional<PathResult>> judge_as_job(Run& run, const std::string& path, const EvaluationContext& ctx,
                                               const PvcRef& pvc, bool dataset) {
  const Policy& p = run.policy;
  const std::string key = run.job->key(run.summary.pod_namespace);
  JobBarrierRequest req;
  req.pvc = pvc;
  req.annotation = job_probe_annotation(key);
  req.fresh.job = key;
  req.fresh.workload = dataset ? fmt::format("dataset/{}w", p.dataset.workers) : workload_key(probed_workload(run));
  req.fresh.expected = run.job->expected_pods;
  req.fresh.gather = duration_cast<milliseconds>(p.job_gather_window);
  req.life = p.deadline;
  req.self = {pod_ref(run), run.summary.node_name, run.summary.gpus, false, {}, ""};
  req.window = duration_cast<milliseconds>(p.workload.runtime);
  req.ttl = p.result_ttl;
  req.wait_until = run.deadline - kRecordReserve;
  req.poll_interval = milliseconds(500);
  req.stop = &run.stop;
  auto joined = join_job_barrier(*run.api, req);
  if (!joined.ok()) {
    if (!sharing_unavailable(joined.error())) {
      return runtime_error(
          fmt::format("meeting the pods of {} on PVC {}: {}", run.job->describe(), pvc.name, joined.error().summary()));
    }
    spdlog::warn("PVC {}: the pods of {} cannot meet there ({}); probing as a lone pod", pvc.name, run.job->describe(),
                 joined.error().summary());
    return std::optional<PathResult>();
  }
  spdlog::info("{}", joined->why);
  switch (joined->action) {
    case JoinAction::kAlone: return std::optional<PathResult>();
    case JoinAction::kTimedOut:
    case JoinAction::kInterrupted: return runtime_error(joined->why);
    case JoinAction::kReuse: {
      auto reused = job_path_result(run, path, ctx, pvc, joined->barrier, -1, ResultSource::kJobShared);
      if (!reused.ok()) return reused.error();
      return std::optional<PathResult>(std::move(*reused));
    }
    case JoinAction::kProbe: break;
  }
  const JobBarrier& b = joined->barrier;
  const Clock::time_point started = Clock::now();
  const JobProbe how{b.window, b.seed, size_t(joined->index), b.members.size()};
  PathResult own;  // our own probe's report, kept with the job's verdict
  Result<Measurement> measured = [&]() -> Result<Measurement> {
    if (dataset) {
      auto d = probe_dataset_path(run, path, ctx, &how);
      if (!d.ok()) return d.error();
      Measurement m = measurement_from_dataset(*d);
      own.dataset = std::move(*d);
      return m;
    }
    auto probe = probe_path(run, path, ctx, nullptr, &how);
    if (!probe.ok()) return probe.error();
    Measurement m = planned_measurement(run.plan, *probe);
    own.probe = std::move(*probe);
    return m;
  }();
  BarrierMember self = req.self;
  if (measured.ok()) {
    self.figures = figures_of(*measured);
    spdlog::info("{}: our share of {}'s window: {}", path, run.job->describe(), measurement_figures(*measured));
  } else {
    self.error = measured.error().message;  // the others need not wait for figures that will not come
  }
  const nanoseconds before = dataset ? nanoseconds(p.dataset.scan_time) : kPrepareAllowance + p.workload.ramp;
  const Clock::time_point report_until =
      std::min(started + before + nanoseconds(b.window) + kJobReportGrace, run.deadline - kRecordReserve);
  Measurement described = measured.ok() ? *measured : Measurement{};
  auto done = report_and_finish(*run.api, req, self, report_until, [&](const JobBarrier& d) {
    return measurement_to_json(job_measurement(described, aggregate_job(d), d.window));
  });
  if (!measured.ok()) return measured.error();
  if (!done.ok()) {
    return runtime_error(
        fmt::format("recording {}'s result on PVC {}: {}", run.job->describe(), pvc.name, done.error().summary()));
  }
  auto out = job_path_result(run, path, ctx, pvc, *done, joined->index, ResultSource::kJob);
  if (!out.ok()) return out.error();
  out->probe = std::move(own.probe);
  out->dataset = std::move(own.dataset);
  return std::optional<PathResult>(std::move(*out));
}

// One path's workload: a shared result from its PVC when one is fresh, else a probe (recorded on
// the PVC for the next pods when we hold the PVC's lock).
Result<PathResult> judge_workload_path(Run& run, const std::string& path) {
  EvaluationContext ctx{run.summary.gpus, path, run.pod_labels};
  const bool dataset = run.plan.source == WorkloadSource::kDataset;
  if (run.policy.workload_mode == WorkloadMode::kAuto) {
    spdlog::info("{}: workload auto: {}", path,
                 dataset ? "the path holds a dataset; reading its files"
                         : fmt::format("no dataset under the path; synthetic samples of {}",
                                       format_size_compact(*run.plan.synthetic->sample_bytes)));
  }
  if (run.api && measured_as_job(run.job)) {
    // A job's pods measure their volume together, wherever it is shared: the result TTL is for reuse.
    if (auto claim = pvc_for_path(run.pod, path, run.options.container_name)) {
      auto judged = judge_as_job(run, path, ctx, PvcRef{run.summary.pod_namespace, *claim}, dataset);
      if (!judged.ok()) return judged.error();
      if (*judged) return std::move(**judged);
    } else {
      spdlog::info("{}: no PVC behind the path, where the pods of {} could meet; probing as a lone pod", path,
                   run.job->describe());
    }
  }
  if (dataset) {
    // Not shared through the PVC: a dataset result depends on the dataset under this path, which
    // differs between pods of one claim more often than the volume's speed does.
    auto dataset = probe_dataset_path(run, path, ctx);
    if (!dataset.ok()) return dataset.error();
    PathResult out;
    out.path = path;
    out.source = ResultSource::kProbe;
    out.measurement = measurement_from_dataset(*dataset);
    out.dataset = std::move(*dataset);
    out.verdict = evaluate_policy(run.policy, out.measurement, ctx);
    spdlog::info("{}: {}", path, measurement_figures(out.measurement));
    return out;
  }
  std::optional<std::string> claim;
  if (run.api && run.policy.result_ttl > nanoseconds::zero())
    claim = pvc_for_path(run.pod, path, run.options.container_name);
  auto with_pvc = [&](Result<PathResult> r) {
    if (r.ok() && claim) r->pvc = *claim;
    return r;
  };
  if (!claim) return probe_alone(run, path, ctx);
  const PvcRef pvc{run.summary.pod_namespace, *claim};

  ShareRequest share;
  share.pvc = pvc;
  share.workload = workload_key(probed_workload(run));
  share.ttl = run.policy.result_ttl;
  share.pod = pod_ref(run);
  share.node = run.summary.node_name;
  // A live holder is waited for as long as a verdict can still be recorded; a takeover then probes
  // in what is left (runtime_within_deadline cuts the runtime, or says it cannot).
  share.wait_until = run.deadline - kRecordReserve;
  share.stop = &run.stop;
  for (;;) {
    auto decision = claim_or_reuse(*run.api, share);
    if (!decision.ok()) {
      if (!sharing_unavailable(decision.error()))
        return runtime_error("sharing the result through PVC " + pvc.name + ": " + decision.error().summary());
      // Sharing saves work; it is not what the pod is judged on. Without PVC access (RBAC), probe.
      spdlog::warn("PVC {}: cannot share results ({}); probing", pvc.name, decision.error().summary());
      return with_pvc(probe_alone(run, path, ctx));
    }
    spdlog::info("{}", decision->why);
    switch (decision->action) {
      case ShareAction::kReuse: {
        auto m = measurement_from_json(decision->reused->result);
        if (!m) {
          spdlog::warn("PVC {}: the recorded result is unreadable; probing", pvc.name);
          return with_pvc(probe_alone(run, path, ctx));
        }
        PathResult out;
        out.path = path;
        out.pvc = pvc.name;
        out.source = ResultSource::kShared;
        out.shared_from = shared_origin(*decision->reused);
        out.measurement = *m;
        out.measurement.path = path;
        out.verdict = evaluate_policy(run.policy, out.measurement, ctx);
        return out;
      }
      case ShareAction::kHolderStillProbing: return runtime_error(decision->why);
      case ShareAction::kInterrupted:
        return runtime_error(
            fmt::format("interrupted while waiting for pod {}'s probe of PVC {}", decision->holder->pod, pvc.name));
      case ShareAction::kProbeLocked: {
        auto locked = probe_locked(run, path, ctx, pvc, decision->lock);
        if (!locked.ok()) return locked.error();
        if (!*locked) continue;
        (*locked)->pvc = pvc.name;
        return std::move(**locked);
      }
    }
  }
}

// The checkpoint probe of a path, within the deadline; a volume that refuses writes gives figures
// with a note (the checkpoint checks fail on it), any other failure is the run's.
Result<CheckpointFigures> measure_checkpoint(Run& run, const std::string& path, CheckpointRequest req) {
  auto runtime =
      runtime_within_deadline(run, path, kPrepareAllowance, req.runtime * 2, "save and restore a checkpoint on");
  if (!runtime.ok()) return runtime.error();
  // The saves take half of what is left; the read-back of the last rounds at most as long again.
  req.runtime = *runtime / 2;
  req.seed = std::random_device{}();
  spdlog::info("{}: checkpoint from {} rank{} (at most {} a rank a round), saves for at most {}", path, req.ranks,
               req.ranks == 1 ? "" : "s", format_bytes(double(req.max_rank_bytes)),
               format_duration_ns(double(req.runtime.count())));
  auto probe =
      run_within_deadline(run, path, [&](const std::atomic<bool>& stop) { return run_checkpoint_probe(req, stop); });
  if (!probe.ok()) {
    if (auto refused = checkpoint_refusal(probe.error(), req.ranks)) {
      spdlog::warn("{}: {}", path, refused->note);
      return *refused;
    }
    return probe.error();
  }
  CheckpointFigures f = checkpoint_figures(*probe);
  spdlog::info("{}: {} ({})", path, checkpoint_figures_text(f), stop_reason_name(probe->stop_reason));
  return f;
}

// One path: its checkpoint where a checkpoint rule applies, its workload where another check
// needs it (measure/checkpoint_measure.h), judged together.
Result<PathResult> judge_path(Run& run, const std::string& path) {
  const EvaluationContext ctx{run.summary.gpus, path, run.pod_labels};
  const std::optional<StorageStack> stack = detect_path(run, path);
  auto plan =
      plan_measurement(run.policy, ctx, stack ? stack->device_class : DeviceClass::kUnknown, JudgedFor::kPod, run.stop);
  if (!plan.ok()) return plan.error();
  run.plan = std::move(*plan);
  if (!run.plan.checkpoint) return judge_workload_path(run, path);
  PathResult out;
  if (run.plan.workload) {
    auto workload = judge_workload_path(run, path);
    if (!workload.ok()) return workload.error();
    out = std::move(*workload);
  } else {
    out.path = path;
    out.source = ResultSource::kProbe;
    out.measurement = stack ? stack_measurement(*stack, path) : Measurement{};
    out.measurement.path = path;
  }
  auto figures = measure_checkpoint(run, path, *run.plan.checkpoint);
  if (!figures.ok()) return figures.error();
  if (out.measurement.measured_s == 0) out.measurement.measured_s = figures->measured_s;
  out.measurement.checkpoint = std::move(*figures);
  // Judged for the GPUs the workload's verdict was (a job's, where the job measured together).
  EvaluationContext judged = ctx;
  if (!out.verdict.checks.empty() || out.job) judged.gpus = out.verdict.gpus;
  out.verdict = evaluate_policy(run.policy, out.measurement, judged);
  return out;
}

PodVerdict outcome_of(const std::vector<PathResult>& results, PolicyMode mode) {
  if (mode == PolicyMode::kOff) return PodVerdict::kOff;
  bool fail = false, warn = false;
  for (const PathResult& r : results) {
    fail |= r.verdict.outcome == VerdictOutcome::kFail;
    warn |= r.verdict.outcome == VerdictOutcome::kWarn;
  }
  return fail ? PodVerdict::kFail : warn ? PodVerdict::kWarn : PodVerdict::kPass;
}

// Annotations and the Event. An Event that fails to post is logged; annotations that fail are an
// API failure (they are what the verdict is read from).
Status record_on_pod(Run& run) {
  if (!run.api) return ok_status();
  const PreflightSummary& s = run.summary;
  auto annotated = patch_pod_annotations(*run.api, s.pod_namespace, s.pod_name, pod_annotations(s));
  EventText text = pod_event_text(s);
  EventSpec event = event_about("Pod", s.pod_namespace, s.pod_name, run.pod, text);
  event.action = "Preflight";
  event.reporting_controller = "iogate.io/preflight";
  event.reporting_instance = "iogate-preflight-" + s.pod_name;
  auto posted = create_event(*run.api, event);
  if (!posted.ok()) spdlog::warn("event {} not posted: {}", text.reason, posted.error().summary());
  if (!annotated.ok()) return annotated.error().to_error();
  spdlog::info("recorded: pod {} annotations{}", pod_ref(run), posted.ok() ? ", Event " + text.reason : "");
  return ok_status();
}

ModeResult result_of(const PreflightSummary& s) {
  return ModeResult{s.status, ModeReport{preflight_report_json(s), render_preflight_human(s)}};
}

// A probe or API failure, handled as the policy's on_error says: the report, its status kOk
// (fail-open) or kFailed (fail-closed). A usage error is the pod spec's mistake (a dataset path
// that does not exist, a workload the volume refuses): no on_error hides it, it ends the run.
ModeOutcome fail_with(Run& run, const Error& e) {
  PreflightSummary& s = run.summary;
  const bool open = fails_open(run.policy);
  s.outcome = PodVerdict::kError;
  s.error = e.message;
  const bool usage = e.kind == ErrorKind::kUsage;
  s.status = open ? ModeStatus::kOk : ModeStatus::kFailed;
  spdlog::error("{}", e.message);
  if (!usage) {
    spdlog::log(open ? spdlog::level::warn : spdlog::level::err, "{}", on_error_text(run.policy));
  }
  if (run.api && !run.pod.is_null()) {
    Status recorded = record_on_pod(run);
    if (!recorded.ok()) spdlog::warn("could not record the failure on the pod: {}", recorded.error().message);
  }
  if (usage) return e;
  return result_of(s);
}

}  // namespace

ModeOutcome run_preflight(const PreflightOptions& options, const std::atomic<bool>& stop) {
  const Clock::time_point started = Clock::now();
  Run run{options, stop, {}, {}, nullptr, {}, {}, {}, {}, {}};
  PreflightSummary& s = run.summary;
  s.time = rfc3339_utc_now();
  s.pod_name = options.pod_name;
  s.pod_namespace = options.pod_namespace;
  s.node_name = options.node_name;
  s.api = "skipped";
  s.gpus_from = "unknown";

  auto policy = resolve_policy(options.policy);
  if (!policy.ok()) return usage_error("--policy: " + policy.error().message);
  run.policy = std::move(*policy);
  if (Status s = apply_named_workload(run.policy, options.workload, options.accelerator); !s.ok()) return s.error();
  s.policy = &run.policy;
  run.deadline = started + run.policy.deadline;
  auto log_policy = [&] {
    spdlog::info("policy {} (mode {}, on_error {}, deadline {})", run.policy.source, policy_mode_name(run.policy.mode),
                 on_error_name(run.policy.on_error), seconds_text(run.policy.deadline));
  };
  if (run.policy.mode == PolicyMode::kOff) {
    log_policy();
    s.outcome = PodVerdict::kOff;
    s.status = ModeStatus::kOk;
    spdlog::info("policy mode off: nothing to check, the pod starts");
    return result_of(s);
  }

  if (Status connected = connect(run); !connected.ok()) {
    if (connected.error().kind == ErrorKind::kUsage) return connected.error();
    log_policy();
    return fail_with(run, connected.error());
  }
  log_policy();
  if (Status pod = read_pod(run); !pod.ok()) return fail_with(run, pod.error());
  for (const std::string& path : options.paths) {
    auto judged = judge_path(run, path);
    if (!judged.ok()) return fail_with(run, judged.error());
    s.results.push_back(std::move(*judged));
  }
  s.outcome = outcome_of(s.results, run.policy.mode);
  s.status = s.outcome == PodVerdict::kFail ? ModeStatus::kBelowPolicy : ModeStatus::kOk;
  spdlog::info("verdict {} for {} path{}", pod_verdict_name(s.outcome), s.results.size(),
               s.results.size() == 1 ? "" : "s");
  if (Status recorded = record_on_pod(run); !recorded.ok()) {
    const std::string outcome(pod_verdict_name(s.outcome));
    const int code = exit_code_for(s.status);
    if (fails_open(run.policy)) {
      // The verdict stands; only its record is missing.
      s.error = "could not record the verdict: " + recorded.error().message;
      spdlog::warn("{} ({}: exit {} as the verdict {} says)", s.error, on_error_text(run.policy), code, outcome);
    } else {
      s.outcome = PodVerdict::kError;
      s.error = "could not record the verdict (" + outcome + "): " + recorded.error().message;
      s.status = ModeStatus::kFailed;
      spdlog::error("{} (on_error fail-closed)", s.error);
    }
  }
  return result_of(s);
}

}  // namespace iogate
