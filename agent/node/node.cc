#include "node/node.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/paths.h"
#include "base/rng.h"
#include "base/units.h"
#include "device/device_busy.h"
#include "device/storage_stack.h"
#include "kube/api_client.h"
#include "kube/connect.h"
#include "kube/operations.h"
#include "measure/measurement_from.h"
#include "measure/measurement_plan.h"
#include "measure/policy_probe.h"
#include "metrics/exposition.h"
#include "node/node_http.h"
#include "node/node_records.h"
#include "node/node_sync.h"
#include "probe/probe.h"

namespace iogate {
namespace {

using Clock = std::chrono::steady_clock;
using SystemClock = std::chrono::system_clock;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// API writes after a failure: 2 s, doubling, at most a minute apart (± 20% jitter), so a node
// catches up soon after an outage without a DaemonSet's worth of agents hammering a recovering
// API server in step.
constexpr milliseconds kSyncRetryFirst{2000};
constexpr milliseconds kSyncRetryMax{60000};
// One sync (a GET and a handful of writes, each retried by the client) must end by then, so the
// loop gets back to probing and to SIGTERM.
constexpr seconds kSyncDeadline{20};
// --once: a retry the backoff would put past the deadline starts this long before it instead (once),
// so an API that recovers late still gets the result.
constexpr seconds kOnceLastTry{5};
// /healthz fails when the loop has not come round for this long beyond the longest probe.
constexpr seconds kLoopStallAllowance{120};

// Waits are jittered, so never a whole unit: "20547s", not "20546694196359ns".
std::string duration_text(nanoseconds d) {
  nanoseconds shown = d >= std::chrono::seconds(1) ? nanoseconds(std::chrono::round<std::chrono::seconds>(d))
                                                   : nanoseconds(std::chrono::round<std::chrono::milliseconds>(d));
  return format_duration_compact(shown.count());
}

// What the HTTP threads read, under `mu`: publish() renders the metrics and the report afresh
// after every change, heartbeat() marks each turn of the loop, and `ready` rises once, after the
// first round.
struct Published {
  std::mutex mu;
  bool ready = false;
  std::string metrics;
  std::string report;
  Clock::time_point heartbeat = Clock::now();
};

struct Agent {
  Agent(const NodeOptions& o, const std::atomic<bool>& s, Policy p) : options(o), stop(s), policy(std::move(p)) {}
  const NodeOptions& options;
  const std::atomic<bool>& stop;
  Policy policy;
  std::string node;
  std::vector<PathOutcome> outcomes;
  std::vector<Clock::time_point> due;
  std::unique_ptr<ApiClient> api;
  ApiSyncState api_state;
  int gpus = 0;
  std::string gpus_from = "unknown";
  NodeJudgement judgement;
  FastRng rng{0};
  Published published;
  bool dirty = false;  // the API has not seen the latest measurements
  Clock::time_point next_sync{};
  milliseconds sync_backoff = kSyncRetryFirst;
  nanoseconds longest_probe{};
  // --once: when the API's share of the run (options.once_deadline) runs out; never otherwise.
  Clock::time_point once_give_up = Clock::time_point::max();

  double unit_random() { return double(rng.next() >> 11) / double(1ULL << 53); }
};

// The latency quantiles of the direction the measurement's p99 is of.
void set_quantiles(PathOutcome& o, const ProbeResult& r) {
  JobResult agg = r.aggregate();
  auto q = [&](double p) {
    uint64_t v = 0;
    if (agg.read.total_ios > 0) v = std::max(v, agg.read.clat.percentile(p));
    if (agg.write.total_ios > 0) v = std::max(v, agg.write.clat.percentile(p));
    return double(v);
  };
  o.p50_ns = q(50);
  o.p90_ns = q(90);
  o.p999_ns = q(99.9);
}

std::string io_priority_note(const NodeOptions& o, const StorageStack& stack) {
  std::string name = io_priority_name(o.io_priority);
  if (o.io_priority.cls == IoPriorityClass::kNone) return name;
  std::vector<std::string> ignoring;
  std::function<void(const std::vector<StackNode>&)> walk = [&](const std::vector<StackNode>& nodes) {
    for (const StackNode& n : nodes) {
      if (!n.scheduler.empty() && !scheduler_honours_io_priority(n.scheduler) &&
          std::find(ignoring.begin(), ignoring.end(), n.scheduler) == ignoring.end()) {
        ignoring.push_back(n.scheduler);
      }
      walk(n.children);
    }
  };
  walk(stack.stack);
  if (ignoring.empty()) return name;
  std::string list;
  for (const std::string& s : ignoring) list += (list.empty() ? "" : ", ") + s;
  return fmt::format("{} (ignored by scheduler {})", name, list);
}

void publish(Agent& a) {
  a.judgement = judge_node(a.policy, a.outcomes, a.gpus, a.gpus_from);
  std::string metrics =
      render_exposition(node_metric_families(node_metrics(a.node, a.judgement, a.outcomes, a.api_state)));
  std::string report = node_report_json(a.node, a.policy, a.judgement, a.outcomes, a.api_state).dump(2) + "\n";
  std::lock_guard<std::mutex> lock(a.published.mu);
  a.published.metrics = std::move(metrics);
  a.published.report = std::move(report);
  a.published.heartbeat = Clock::now();
}

void heartbeat(Agent& a) {
  std::lock_guard<std::mutex> lock(a.published.mu);
  a.published.heartbeat = Clock::now();
}

// A samples-mode path's 4 KiB random-read headline, right after its samples probe (the same slot,
// priority and busy check). The verdict does not need it: a failure keeps the previous headline.
void probe_randread_headline(Agent& a, size_t i, const StorageStack& stack) {
  PathOutcome& o = a.outcomes[i];
  ProbeRequest req = randread_headline_request(a.policy, o.config.path, a.options.root, &stack);
  spdlog::info("{}: probing the headline {}", o.config.path, describe_probe_request(a.policy, req));
  const Clock::time_point started = Clock::now();
  auto result = run_probe(req, a.stop, nullptr);
  a.longest_probe = std::max(a.longest_probe, nanoseconds(Clock::now() - started));
  if (a.stop.load() || (result.ok() && result->stop_reason == StopReason::kSignal)) return;
  if (!result.ok()) {
    spdlog::warn("{}: the 4k random-read headline failed ({}); iogate.io/randread-iops keeps its last value",
                 o.config.path, result.error().message);
    return;
  }
  o.randread = measurement_from_probe(*result);
  spdlog::info("{}: headline {}", o.config.path, measurement_figures(*o.randread));
}

// One path, once: detect, the busy check, the probe. Updates the outcome and its next due time.
void attempt(Agent& a, size_t i) {
  PathOutcome& o = a.outcomes[i];
  const NodeSettings& ns = a.policy.node;
  const std::string& path = o.config.path;
  o.attempted_at = SystemClock::now();
  auto retry_later = [&](PathState state, const std::string& detail) {
    o.state = state;
    o.detail = detail;
    nanoseconds wait = jittered(ns.busy_retry, ns.jitter, a.unit_random());
    a.due[i] = Clock::now() + wait;
    spdlog::log(state == PathState::kBusy ? spdlog::level::info : spdlog::level::warn, "{}: {}; next try in {}", path,
                detail, duration_text(wait));
  };

  auto stack = detect_storage_stack(path, DetectOptions{a.options.root});
  if (!stack.ok()) {
    ++o.errors;
    retry_later(PathState::kError, "detect: " + stack.error().message);
    return;
  }
  o.stack = *stack;

  const std::string proc_root = proc_under(a.options.root);
  auto busy = sample_device_busy(*stack, a.options.busy_window, proc_root, a.stop);
  if (a.stop.load()) return;
  if (!busy.ok()) {
    spdlog::warn("{}: cannot tell whether the device is busy ({}); probing anyway", path, busy.error().message);
  } else if (!busy->measurable) {
    spdlog::debug("{}: no busy check: {}", path, busy->why_not);
  } else if (busy->util_percent > ns.busy_util_percent) {
    ++o.busy_skips;
    retry_later(PathState::kBusy,
                fmt::format("device {} busy: {:.0f}% util over {:.1f} s (skip above {:g}%)", busy->busiest_device,
                            busy->util_percent, busy->window_s, ns.busy_util_percent));
    return;
  }

  // The node's labels want the figure itself, not only which side of a floor it is on: the samples
  // probes stop on convergence alone (no floor, no GPU count), and a synthetic sample is the
  // largest of every demand rule covering the path, pod selectors or not (node_records.h).
  EvaluationContext ctx{a.gpus, path, {}};
  const bool samples_mode = a.policy.workload_mode != WorkloadMode::kIo;
  // What both workloads do with a measurement: record it and schedule the next probe.
  auto measured = [&](const Measurement& m, nanoseconds took) {
    o.measurement = m;
    o.probe_wall_s = std::chrono::duration<double>(took).count();
    o.measured_at = SystemClock::now();
    o.state = PathState::kMeasured;
    o.detail.clear();
    ++o.probes;
    nanoseconds wait = jittered(ns.interval, ns.jitter, a.unit_random());
    a.due[i] = Clock::now() + wait;
    spdlog::info("{}: {} in {:.1f} s ({}); next probe in {}", path, measurement_figures(*o.measurement), o.probe_wall_s,
                 stop_reason_name(o.measurement->stop_reason), duration_text(wait));
    a.dirty = true;
    if (samples_mode) probe_randread_headline(a, i, *stack);
  };
  // What both workloads do with a finished probe before its measurement: note how long it took,
  // and settle a stop or an error. True when there is a measurement to record.
  auto settled = [&](const auto& result, nanoseconds took) {
    a.longest_probe = std::max(a.longest_probe, took);
    if (a.stop.load() || (result.ok() && result->stop_reason == StopReason::kSignal)) {
      o.state = PathState::kStopped;
      o.detail = "interrupted by a signal";
      return false;
    }
    if (!result.ok()) {
      ++o.errors;
      retry_later(PathState::kError, result.error().message);
      return false;
    }
    return true;
  };
  auto plan = plan_measurement(a.policy, ctx, stack->device_class, JudgedFor::kNode, a.stop);
  if (!plan.ok()) {
    ++o.errors;
    retry_later(PathState::kError, plan.error().message);
    return;
  }
  if (plan->source == WorkloadSource::kDataset) {
    DatasetRequest req = policy_dataset_request(a.policy, path, a.options.root, ctx, &*stack);
    req.loader.early_stop.threshold_iops.reset();
    spdlog::info("{}: probing {}", path, describe_dataset_request(req));
    const Clock::time_point started = Clock::now();
    auto result = run_dataset_probe(req, a.stop, nullptr);
    const nanoseconds took = Clock::now() - started;
    if (!settled(result, took)) return;
    // The file latencies stand for the per-I/O ones of a block-I/O probe.
    if (const LoaderRun* l = result->loader()) {
      o.p50_ns = double(l->file_ns.percentile(50));
      o.p90_ns = double(l->file_ns.percentile(90));
      o.p999_ns = double(l->file_ns.percentile(99.9));
    }
    measured(measurement_from_dataset(*result), took);
    return;
  }
  ProbeRequest req = planned_probe_request(a.policy, *plan, path, a.options.root, ctx, &*stack);
  if (plan->synthetic) req.early_stop.threshold_iops.reset();
  o.io_priority = io_priority_note(a.options, *stack);
  spdlog::info("{}: probing {} at I/O priority {}", path, describe_probe_request(a.policy, req), o.io_priority);
  const Clock::time_point started = Clock::now();
  auto result = run_probe(req, a.stop, nullptr);
  const nanoseconds took = Clock::now() - started;
  if (!settled(result, took)) return;
  set_quantiles(o, *result);
  measured(planned_measurement(*plan, *result), took);
}

// One sync's deadline for the client: its own bound, or less when --once's deadline is nearer.
Clock::time_point api_deadline(const Agent& a) {
  const Clock::time_point now = Clock::now();
  return a.once_give_up - now < kSyncDeadline ? a.once_give_up : now + kSyncDeadline;
}

// Writes the state to the Node; on failure schedules a retry with backoff.
bool sync(Agent& a) {
  if (!a.api) return true;
  a.api->set_deadline(api_deadline(a));
  NodeSyncRequest req{a.node, &a.policy, &a.outcomes, a.options.gpus};
  auto synced = sync_node(*a.api, req);
  if (!synced.ok()) {
    ++a.api_state.sync_errors;
    a.api_state.state = "pending";
    a.api_state.last_error = synced.error().message;
    auto jitter = milliseconds(static_cast<int64_t>(a.sync_backoff.count() * (0.8 + 0.4 * a.unit_random())));
    a.next_sync = Clock::now() + jitter;
    spdlog::warn("node {}: could not write the state ({}); retrying in {}", a.node, synced.error().message,
                 duration_text(jitter));
    a.sync_backoff = std::min(kSyncRetryMax, a.sync_backoff * 2);
    return false;
  }
  a.gpus = synced->judgement.gpus;
  a.gpus_from = synced->judgement.gpus_from;
  a.api_state.state = "ok";
  a.api_state.last_error.clear();
  a.api_state.last_sync = SystemClock::now();
  a.sync_backoff = kSyncRetryFirst;
  a.dirty = false;
  const NodeJudgement& j = synced->judgement;
  if (j.best) {
    spdlog::info("node {}: verdict {} ({} GPUs from {}), labels changed {}, taint {}{}", a.node, node_outcome_name(j),
                 j.gpus, j.gpus_from, synced->labels_changed, synced->taint,
                 synced->event ? fmt::format(", Event {} (condition {} → {})", synced->event->reason,
                                             synced->previous_status.empty() ? "absent" : synced->previous_status,
                                             j.below_policy() ? "True" : "False")
                               : "");
  }
  return true;
}

// Connects when there is a cluster to talk to; configuration errors of a kubeconfig the user named
// are usage errors. Without a node name nothing can be written: say so and go on (metrics only).
Status connect(Agent& a) {
  const NodeOptions& o = a.options;
  ApiConnectOptions c;
  c.kubeconfig = o.kubeconfig;
  c.context = o.kube_context;
  c.no_api = o.no_api;
  if (a.node.empty())
    c.decline = "the node name is unknown (--node-name or NODE_NAME from the downward API: spec.nodeName)";
  c.stop = &a.stop;
  auto api = connect_api(c);
  if (!api.ok()) return api.error();
  if (!api->client) {
    a.api_state.state = "skipped: " + api->skipped;
    if (api->skip == ApiSkip::kNotInCluster) {
      spdlog::warn("{}: labels, taints and conditions are not written", a.api_state.state);
    } else if (api->skip == ApiSkip::kDeclined) {
      spdlog::warn("{}", a.api_state.state);
    }
    return ok_status();
  }
  a.api = std::move(api->client);
  a.api_state.state = "pending";
  return ok_status();
}

NodeHttpHandlers http_handlers(Agent& a) {
  NodeHttpHandlers h;
  Published& p = a.published;
  h.metrics = [&p] {
    std::lock_guard<std::mutex> lock(p.mu);
    return HttpAnswer{200, kExpositionContentType, p.metrics};
  };
  h.report = [&p] {
    std::lock_guard<std::mutex> lock(p.mu);
    if (!p.ready)
      return HttpAnswer{503, "application/json",
                        "{\"error\":\"no report yet: the first round of probes is running\"}\n"};
    return HttpAnswer{200, "application/json", p.report};
  };
  h.readyz = [&p] {
    std::lock_guard<std::mutex> lock(p.mu);
    if (!p.ready)
      return HttpAnswer{503, "text/plain; charset=utf-8", "not ready: the first round of probes is running\n"};
    return HttpAnswer{200, "text/plain; charset=utf-8", "ok\n"};
  };
  h.healthz = [&a, &p] {
    std::lock_guard<std::mutex> lock(p.mu);
    auto stalled = Clock::now() - p.heartbeat;
    auto allowed = a.policy.workload.ramp + a.policy.workload.runtime + std::max(a.longest_probe, nanoseconds(0)) +
                   kSyncDeadline + kLoopStallAllowance;
    if (stalled > allowed) {
      return HttpAnswer{500, "text/plain; charset=utf-8",
                        fmt::format("the agent's loop has not come round for {}\n", duration_text(stalled))};
    }
    return HttpAnswer{200, "text/plain; charset=utf-8", "ok\n"};
  };
  return h;
}

// --once: the report, failed where a path was not measured or the result not written.
ModeResult once_result(const Agent& a, bool written) {
  ModeResult out;
  out.report = ModeReport{node_report_json(a.node, a.policy, a.judgement, a.outcomes, a.api_state),
                          render_node_human(a.node, a.policy, a.judgement, a.outcomes, a.api_state)};
  const bool measured = std::all_of(a.outcomes.begin(), a.outcomes.end(),
                                    [](const PathOutcome& o) { return o.state == PathState::kMeasured; });
  if (!measured || !written) {
    out.status = ModeStatus::kFailed;
  } else if (a.policy.mode == PolicyMode::kEnforce && a.judgement.outcome == VerdictOutcome::kFail) {
    out.status = ModeStatus::kBelowPolicy;
  }
  return out;
}

}  // namespace

std::chrono::nanoseconds jittered(std::chrono::nanoseconds interval, double jitter, double unit_random) {
  double factor = 1 + jitter * (2 * unit_random - 1);
  return nanoseconds(static_cast<int64_t>(double(interval.count()) * factor));
}

Result<NodeSettings> effective_node_settings(const Policy& p, const NodeOptions& o) {
  NodeSettings s = p.node;
  if (!o.paths.empty()) s.paths = o.paths;
  if (o.interval) s.interval = *o.interval;
  if (o.busy_retry) s.busy_retry = *o.busy_retry;
  if (o.jitter) s.jitter = *o.jitter;
  if (o.busy_util_percent) s.busy_util_percent = *o.busy_util_percent;
  if (o.taint_effect) s.taint_effect = *o.taint_effect;
  if (s.paths.empty()) {
    return usage_error("--path: missing; give the data paths to probe (--path /mnt/nvme, or node.paths in the policy)");
  }
  for (const NodePath& np : s.paths) {
    struct stat st {};
    if (stat(np.path.c_str(), &st) != 0)
      return usage_error(fmt::format("--path: {}: {}", np.path, std::strerror(errno)));
    if (!S_ISDIR(st.st_mode) && !S_ISBLK(st.st_mode)) {
      return usage_error(fmt::format("--path: {}: not a directory or block device", np.path));
    }
  }
  return s;
}

ModeOutcome run_node_agent(const NodeOptions& options, const std::atomic<bool>& stop) {
  auto policy = resolve_policy(options.policy);
  if (!policy.ok()) return usage_error("--policy: " + policy.error().message);
  auto settings = effective_node_settings(*policy, options);
  if (!settings.ok()) return settings.error();
  policy->node = std::move(*settings);

  Agent a(options, stop, std::move(*policy));
  a.node = options.node_name;
  std::random_device entropy;
  // Seeded by the node name too, so that nodes started in the same second still spread.
  a.rng = FastRng(mix_seed((uint64_t(entropy()) << 32) ^ entropy(), std::hash<std::string>{}(a.node)));
  if (options.gpus) {
    a.gpus = *options.gpus;
    a.gpus_from = "--gpus";
  }
  for (const NodePath& np : a.policy.node.paths) a.outcomes.push_back(PathOutcome{np});
  a.due.assign(a.outcomes.size(), Clock::now());

  if (Status connected = connect(a); !connected.ok()) {
    if (connected.error().kind == ErrorKind::kUsage) return connected.error();
    spdlog::error("api: {}; going on without it", connected.error().message);
    a.api.reset();
    a.api_state.state = "skipped: " + connected.error().message;
  }
  // --once: what is left of the API's time; the probes' time is not counted.
  nanoseconds once_left = options.once_deadline;
  if (a.api && !options.gpus) {
    // The early stop's floor scales with the GPUs: know them before the first probe.
    const Clock::time_point asked = Clock::now();
    if (options.once) a.once_give_up = asked + once_left;
    a.api->set_deadline(api_deadline(a));
    auto node = get_node(*a.api, a.node);
    once_left -= Clock::now() - asked;
    if (node.ok()) {
      NodeGpus gpus = node_gpu_count(*node);
      a.gpus = gpus.count;
      a.gpus_from = gpus.from;
    } else {
      spdlog::warn("node {}: not read ({}); GPUs unknown until the API answers", a.node, node.error().summary());
    }
  }
  const NodeSettings& ns = a.policy.node;
  spdlog::info("node {}: policy {} (mode {}), {} path{}, every {} ±{}, skip above {:g}% util, taint {}",
               a.node.empty() ? "?" : a.node, a.policy.source, policy_mode_name(a.policy.mode), ns.paths.size(),
               ns.paths.size() == 1 ? "" : "s", duration_text(ns.interval), format_percent(ns.jitter),
               ns.busy_util_percent, ns.taint_effect.empty() ? "none" : ns.taint_effect);
  publish(a);

  std::unique_ptr<NodeHttpServer> http;
  if (!options.listen.empty() && options.listen != "none") {
    auto started = NodeHttpServer::start(options.listen, http_handlers(a));
    if (!started.ok()) return started.error();
    http = std::move(*started);
    spdlog::info("serving /metrics /healthz /readyz /report on {}", http->address());
  }
  // After the HTTP threads exist, so that only the probe inherits the idle class.
  if (options.io_priority.cls != IoPriorityClass::kNone) {
    if (Status s = set_thread_io_priority(options.io_priority); !s.ok()) {
      spdlog::warn("I/O priority {} not set: {}", io_priority_name(options.io_priority), s.error().message);
      for (PathOutcome& o : a.outcomes)
        o.io_priority = "default (could not set " + io_priority_name(options.io_priority) + ")";
    }
  }

  // The first round: every path once, so that /readyz and --once have a whole picture.
  for (size_t i = 0; i < a.outcomes.size() && !stop.load(); ++i) {
    attempt(a, i);
    publish(a);
  }
  if (stop.load()) {
    spdlog::info("stopped by a signal during the first round");
    return ModeResult{options.once ? ModeStatus::kFailed : ModeStatus::kOk, std::nullopt};
  }
  if (options.once) a.once_give_up = Clock::now() + std::max(once_left, nanoseconds(0));
  bool written = sync(a);
  publish(a);
  {
    std::lock_guard<std::mutex> lock(a.published.mu);
    a.published.ready = true;
  }

  if (options.once) {
    // Retries as the backoff says while they fit; then one last try kOnceLastTry before the
    // deadline (at once when less is left), never a wait that ends past it.
    bool last_try = false;
    while (!written && a.api && !stop.load() && !last_try) {
      Clock::time_point at = a.next_sync;
      if (at > a.once_give_up - kOnceLastTry) {
        at = std::max(Clock::now(), a.once_give_up - kOnceLastTry);
        last_try = true;
        if (at >= a.once_give_up) break;
      }
      while (Clock::now() < at && !stop.load()) std::this_thread::sleep_for(milliseconds(50));
      if (stop.load()) break;
      written = sync(a);
    }
    if (!written && a.api && !stop.load()) {
      const std::string limit = format_duration_compact(options.once_deadline.count());
      spdlog::error(
          "node {}: the result was not written within --once-deadline {} (the API's time, probes not "
          "counted); giving up, exit 3; last error: {}",
          a.node, limit, a.api_state.last_error);
      a.api_state.last_error =
          fmt::format("not written within --once-deadline {}; last: {}", limit, a.api_state.last_error);
    }
    publish(a);
    return once_result(a, written || !a.api);
  }

  while (!stop.load()) {
    heartbeat(a);
    Clock::time_point now = Clock::now();
    size_t next = std::min_element(a.due.begin(), a.due.end()) - a.due.begin();
    if (a.due[next] <= now) {
      attempt(a, next);
      if (a.dirty && !stop.load()) sync(a);
      publish(a);
      continue;
    }
    if (a.dirty && a.api && a.next_sync <= now) {
      sync(a);
      publish(a);
      continue;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  spdlog::info("stopped by a signal");
  return ModeResult{};
}

}  // namespace iogate
