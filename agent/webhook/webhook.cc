#include "webhook/webhook.h"

#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/version.h"
#include "http/get_server.h"
#include "kube/api_client.h"
#include "kube/connect.h"
#include "kube/operations.h"
#include "metrics/exposition.h"
#include "metrics/webhook_metrics.h"
#include "policy/policy.h"
#include "webhook/admission.h"
#include "webhook/admission_metrics.h"
#include "webhook/certificate_reloader.h"
#include "webhook/node_cache.h"
#include "webhook/node_check.h"
#include "webhook/node_informer.h"
#include "webhook/node_source.h"
#include "webhook/node_store.h"
#include "webhook/webhook_server.h"

namespace iogate {
namespace {

using Clock = std::chrono::steady_clock;

// A missing node may be joining the cluster: ask again soon.
constexpr std::chrono::milliseconds kNegativeCacheTtl{5000};

HttpAnswer to_answer(const AdmissionOutcome& o) {
  spdlog::info("{}", o.log_line);
  return HttpAnswer{o.http_status, o.content_type, o.body};
}

// A decision timed and counted.
template <class Decide>
HttpAnswer answer_counted(AdmissionMetrics& metrics, AdmissionEndpoint endpoint, Decide decide) {
  auto start = Clock::now();
  AdmissionOutcome o = decide();
  metrics.record(endpoint, o, Clock::now() - start);
  return to_answer(o);
}

double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

ModeOutcome run_webhook(const WebhookOptions& options, const std::atomic<bool>& stop) {
  auto policy = resolve_policy(options.policy);
  if (!policy.ok()) return usage_error("--policy: " + policy.error().message);
  auto certificates =
      std::make_shared<CertificateReloader>(TlsFiles{options.tls_cert, options.tls_key}, options.cert_check_interval);
  if (Status loaded = certificates->load(); !loaded.ok()) return loaded.error();
  // Without a cluster (or --no-api) no client: look-ups then fail, and /validate allows with a
  // warning.
  ApiConnectOptions c;
  c.kubeconfig = options.kubeconfig;
  c.context = options.kube_context;
  c.no_api = options.no_api;
  c.stop = &stop;
  auto api = connect_api(c);
  if (!api.ok()) {
    if (api.error().kind == ErrorKind::kUsage) return api.error();
    spdlog::error("api: {}; node look-ups will fail and /validate will allow with a warning", api.error().message);
  }
  std::unique_ptr<ApiClient> client = api.ok() ? std::move(api->client) : nullptr;
  if (!client) spdlog::warn("api: none; /validate cannot look nodes up and allows pinned pods with a warning");

  WebhookConfig config;
  config.policy = &*policy;
  config.allow_opt_out = policy->webhook.allow_opt_out;
  if (!options.preflight_image.empty()) config.preflight_image = options.preflight_image;
  config.policy_configmap = options.policy_configmap;
  config.preflight_requests = options.preflight_requests;
  config.preflight_limits = options.preflight_limits;
  config.extra_gpu_resources = options.gpu_resources;

  // Look-ups are bounded by the request's deadline, less a margin to write the answer.
  const auto lookup_budget = options.request_deadline - std::chrono::milliseconds(500);
  NodeCache fallback(
      [&client, lookup_budget](const std::string& name) -> ApiResult<nlohmann::json> {
        if (!client) return ApiError{"GET /api/v1/nodes/" + name, 0, "NoAPI", "no Kubernetes API configured"};
        client->set_deadline(Clock::now() + lookup_budget);
        auto node = get_node(*client, name);
        if (!node.ok()) return node;
        return decision_view(*node);
      },
      options.node_cache_ttl, kNegativeCacheTtl);
  // The list+watch of every node, on a client of its own (a client serves one request at a time).
  NodeStore store(options.node_watch_max_lag);
  std::unique_ptr<NodeInformer> informer;
  if (client && options.node_watch) {
    informer = std::make_unique<NodeInformer>(std::make_unique<ApiClient>(client->config()), store);
  }
  NodeSource nodes(informer ? &store : nullptr, fallback);
  NodeLookup lookup = [&nodes](const std::string& name) { return nodes.lookup(name); };

  AdmissionMetrics admissions;
  WebhookHandlers handlers;
  handlers.mutate = [&config, &admissions](const std::string& body) {
    return answer_counted(admissions, AdmissionEndpoint::kMutate, [&] { return handle_mutate(body, config); });
  };
  handlers.validate = [&config, &lookup, &admissions](const std::string& body) {
    return answer_counted(admissions, AdmissionEndpoint::kValidate,
                          [&] { return handle_validate(body, config, lookup); });
  };
  handlers.node_cache_state = [&] {
    nlohmann::json j = {{"watch", informer != nullptr}, {"lookups", to_json(nodes.counters())}};
    if (informer) {
      j["store"] = to_json(store.state(NodeStore::Clock::now()));
      j["informer"] = to_json(informer->state());
    }
    return j.dump() + "\n";
  };
  WebhookServerOptions server_options;
  server_options.read_timeout = std::chrono::duration_cast<std::chrono::seconds>(options.request_deadline);
  if (server_options.read_timeout < std::chrono::seconds(1)) server_options.read_timeout = std::chrono::seconds(1);
  auto server = WebhookServer::start(options.listen, certificates, handlers, server_options);
  if (!server.ok()) return server.error();
  auto metrics_answer = [&] {
    WebhookMetrics m;
    m.version = kVersion;
    admissions.fill(m);
    if (auto pair = certificates->snapshot()) m.certificate_not_after_unix_s = unix_seconds(pair->not_after);
    if (informer) {
      NodeStoreState s = store.state(NodeStore::Clock::now());
      NodeWatchMetrics w{s.synced, s.current, static_cast<double>(s.nodes), std::nullopt};
      if (s.since_contact) w.last_contact_unix_s = unix_seconds(std::chrono::system_clock::now() - *s.since_contact);
      m.node_watch = w;
    }
    return HttpAnswer{200, kExpositionContentType, render_exposition(webhook_metric_families(m))};
  };
  std::unique_ptr<GetServer> metrics_server;
  if (!options.metrics_listen.empty() && options.metrics_listen != "none") {
    GetServerOptions metrics_options;
    metrics_options.flag = "--metrics-listen";
    auto started = GetServer::start(options.metrics_listen, "iogate webhook",
                                    {{"/metrics", metrics_answer},
                                     {"/healthz",
                                      [] {
                                        return HttpAnswer{200, "text/plain; charset=utf-8", "ok\n"};
                                      }}},
                                    metrics_options);
    if (!started.ok()) return started.error();
    metrics_server = std::move(*started);
    spdlog::info("serving /metrics on {}", metrics_server->address());
  }
  auto pair = certificates->snapshot();
  spdlog::info(
      "iogate {} webhook: policy {} (mode {}), certificate {} serial {}; serving /mutate /validate /healthz on {}",
      kVersion, policy->source, policy_mode_name(policy->mode), pair->subject, pair->serial, (*server)->address());
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("stopped by a signal");
  return ModeResult{};
}

}  // namespace iogate
