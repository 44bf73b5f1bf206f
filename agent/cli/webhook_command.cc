#include "cli/webhook_command.h"

#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "base/exit_codes.h"
#include "base/units.h"
#include "cli/api_connection.h"
#include "cli/command_line.h"
#include "cli/mode_exit.h"
#include "cli/signals.h"
#include "http/listener.h"
#include "kube/operations.h"
#include "webhook/webhook_check.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

po::options_description webhook_flags() {
  po::options_description d("webhook options");
  d.add_options()("listen", po::value<std::string>()->default_value(":8443"),
                  "HTTPS address for /mutate /validate /healthz")(
      "metrics-listen", po::value<std::string>()->default_value(":9561"),
      "HTTP address for /metrics /healthz (Prometheus); none: no metrics listener")(
      "tls-cert", po::value<std::string>(), "serving certificate (PEM, leaf first); re-read when it changes")(
      "tls-key", po::value<std::string>(), "its private key (PEM)")(
      "no-api", po::bool_switch(), "never call the Kubernetes API (/validate then allows pinned pods with a warning)")(
      "request-deadline", po::value<std::string>()->default_value("8s"),
      "answer every request within this (keep it below the webhook's timeoutSeconds)")(
      "node-cache-ttl", po::value<std::string>()->default_value("5s"),
      "where the node watch is not current, how long a node fetched by name is reused")(
      "node-watch-max-lag", po::value<std::string>()->default_value("10s"),
      "how long the node watch may be down (reopening, relisting) before look-ups fetch nodes by name")(
      "no-node-watch", po::bool_switch(), "never list or watch nodes: fetch each node by name (--node-cache-ttl)")(
      "cert-check-interval", po::value<std::string>()->default_value("10s"),
      "how often the certificate files are checked for a rotation")(
      "preflight-image", po::value<std::string>(),
      "image of the injected preflight initContainer (default iogate:<version>)")(
      "policy-configmap", po::value<std::string>()->default_value("iogate-policy"),
      "ConfigMap holding policy.yaml for the injected preflight")(
      "preflight-requests", po::value<std::string>(),
      "requests of the injected preflight, as kubectl's --requests: cpu=1,memory=256Mi")(
      "preflight-limits", po::value<std::string>(), "its limits, the same way (equal to the requests: Guaranteed)")(
      "gpu-resource", po::value<std::vector<std::string>>()->composing(),
      "another resource name that counts as GPUs, repeatable");
  add_policy_flag(d);
  add_kube_flags(d);
  add_closing_flags(d, nullptr, "info");
  return d;
}

Result<std::chrono::milliseconds> duration_flag(const po::variables_map& vm, const char* flag,
                                                std::chrono::milliseconds min, std::chrono::milliseconds max) {
  auto d = parse_duration(vm[flag].as<std::string>(), std::string("--") + flag);
  if (!d.ok()) return d.error();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms < min || ms > max) {
    return usage_error(fmt::format("--{}: must be within [{} ms, {} ms], got \"{}\"", flag, min.count(), max.count(),
                                   vm[flag].as<std::string>()));
  }
  return ms;
}

}  // namespace

Result<WebhookOptions> parse_webhook_args(const std::vector<std::string>& args, std::string* help_text) {
  po::options_description flags = webhook_flags();
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) return parsed.error();
  const po::variables_map& vm = parsed->flags;
  WebhookOptions o;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate webhook --tls-cert F --tls-key F [--policy FILE|profile:NAME] [options]\n"
           "       iogate webhook check [options]   prove the API server can call the webhook (--help)\n\n"
           "The admission webhook: /mutate adds a required node affinity on the node agent's labels to pods\n"
           "that request GPUs (and injects the preflight initContainer on request); /validate refuses GPU pods\n"
           "pinned to a node below policy. HTTPS only (TLS 1.2+); the certificate is re-read when rotated.\n\n"
        << flags << "\nexit codes: 0 stopped by SIGTERM/SIGINT, 2 usage or configuration, 3 cannot serve\n";
    *help_text = out.str();
    return o;
  }
  if (!parsed->paths.empty()) return usage_error(fmt::format("unexpected argument \"{}\"", parsed->paths[0]));
  for (const char* required : {"tls-cert", "tls-key"}) {
    if (!vm.count(required)) return usage_error(fmt::format("--{}: missing", required));
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  o.listen = str("listen");
  if (auto a = parse_listen_address(o.listen); !a.ok()) return a.error();
  o.metrics_listen = str("metrics-listen");
  if (o.metrics_listen == "none") o.metrics_listen.clear();
  if (!o.metrics_listen.empty()) {
    if (auto a = parse_listen_address(o.metrics_listen, "--metrics-listen"); !a.ok()) return a.error();
  }
  o.tls_cert = str("tls-cert");
  o.tls_key = str("tls-key");
  o.policy = str("policy");
  if (vm.count("kubeconfig")) o.kubeconfig = str("kubeconfig");
  if (vm.count("context")) o.kube_context = str("context");
  o.no_api = vm["no-api"].as<bool>();
  using std::chrono::milliseconds;
  auto deadline = duration_flag(vm, "request-deadline", milliseconds(1000), milliseconds(30000));
  if (!deadline.ok()) return deadline.error();
  o.request_deadline = *deadline;
  auto ttl = duration_flag(vm, "node-cache-ttl", milliseconds(0), milliseconds(3600000));
  if (!ttl.ok()) return ttl.error();
  o.node_cache_ttl = *ttl;
  auto lag = duration_flag(vm, "node-watch-max-lag", milliseconds(1000), milliseconds(600000));
  if (!lag.ok()) return lag.error();
  o.node_watch_max_lag = *lag;
  o.node_watch = !vm["no-node-watch"].as<bool>();
  auto check = duration_flag(vm, "cert-check-interval", milliseconds(100), milliseconds(3600000));
  if (!check.ok()) return check.error();
  o.cert_check_interval = *check;
  if (vm.count("preflight-image")) o.preflight_image = str("preflight-image");
  o.policy_configmap = str("policy-configmap");
  for (auto [flag, list] :
       {std::pair{"preflight-requests", &o.preflight_requests}, std::pair{"preflight-limits", &o.preflight_limits}}) {
    if (!vm.count(flag)) continue;
    auto parsed = parse_resource_list(str(flag), std::string("--") + flag);
    if (!parsed.ok()) return parsed.error();
    *list = std::move(*parsed);
  }
  if (vm.count("gpu-resource")) o.gpu_resources = vm["gpu-resource"].as<std::vector<std::string>>();
  if (auto logging = apply_closing_flags(vm); !logging.ok()) return logging.error();
  return o;
}

namespace {

// `iogate webhook check`: a dry-run create of a judged pod, judged (webhook/webhook_check.h).
int run_check(const std::vector<std::string>& args) {
  po::options_description d("webhook check options");
  add_kube_flags(d);
  d.add_options()("namespace,n", po::value<std::string>()->default_value("default"),
                  "create the dry-run pod here: a namespace the webhook's namespaceSelector selects")(
      "gpu-resource", po::value<std::string>()->default_value("nvidia.com/gpu"),
      "the GPU resource the dry-run pod requests one of")(
      "timeout", po::value<std::string>()->default_value("30s"),
      "the API's time in all, retries of a 500 included; then exit 3 with the last answer");
  add_closing_flags(d, nullptr, "warn");
  auto parsed = parse_command_line(args, d);
  if (!parsed.ok()) return report_usage_failure("webhook check", parsed.error());
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate webhook check [--namespace NS] [--gpu-resource R] [--kubeconfig F] [--context NAME]\n\n"
           "Asks the API server to create, as a server-side dry run (nothing is stored), a pod requesting a GPU\n"
           "and annotated iogate.io/inject-preflight, and passes when the answer shows iogate's webhook was called\n"
           "(the preflight initContainer injected, or a refusal by the webhook itself). The chart's helm test\n"
           "runs it. On failure the message quotes the API server and names the chart value to change.\n\n"
        << d
        << "\nexit codes: 0 the API server called the webhook, 2 usage or configuration, 3 it did not (or the\n"
           "API failed)\n";
    return print_help(out.str());
  }
  if (!parsed->paths.empty()) {
    return report_usage_failure("webhook check", usage_error("unexpected argument " + parsed->paths[0]));
  }
  WebhookCheckOptions o;
  o.ns = vm["namespace"].as<std::string>();
  if (Status s = check_namespace_name(o.ns, "--namespace"); !s.ok())
    return report_usage_failure("webhook check", s.error());
  o.gpu_resource = vm["gpu-resource"].as<std::string>();
  if (o.gpu_resource.empty() || o.gpu_resource.find('/') == std::string::npos) {
    return report_usage_failure("webhook check",
                                usage_error("--gpu-resource: expected DOMAIN/NAME, e.g. nvidia.com/gpu"));
  }
  auto timeout = parse_timeout_flag(vm["timeout"].as<std::string>());
  if (!timeout.ok()) return report_usage_failure("webhook check", timeout.error());
  if (auto s = apply_closing_flags(vm); !s.ok()) return report_usage_failure("webhook check", s.error());
  auto api = one_shot_api(vm, *timeout);
  if (!api.ok()) return report_usage_failure("webhook check", api.error());
  auto verdict = check_webhook(**api, o);
  if (!verdict.ok()) {
    std::fprintf(stderr, "iogate webhook check: %s\n", verdict.error().message.c_str());
    return kExitRuntime;
  }
  std::printf("%s\n", verdict->c_str());
  return kExitOk;
}

}  // namespace

int run_webhook_command(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "check") return run_check({args.begin() + 1, args.end()});
  std::string help;
  auto options = parse_webhook_args(args, &help);
  if (auto done = parsing_exit("webhook", options, help)) return *done;
  StopSignals signals;
  return finish_mode("webhook", run_webhook(*options, signals.stop()), false);
}

}  // namespace iogate
