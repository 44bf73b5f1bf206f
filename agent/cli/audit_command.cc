#include "cli/audit_command.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "audit/audit.h"
#include "base/exit_codes.h"
#include "base/json_fields.h"
#include "base/quote.h"
#include "base/units.h"
#include "cli/api_connection.h"
#include "cli/command_line.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

constexpr const char* kCommand = "audit";

// policy.yaml of the ConfigMap NAMESPACE/NAME, as the chart writes it.
Result<Policy> configmap_policy(ApiClient& api, const std::string& ref) {
  const size_t slash = ref.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == ref.size())
    return usage_error("--policy-configmap: expected NAMESPACE/NAME, got " + quote_value(ref));
  const std::string ns = ref.substr(0, slash), name = ref.substr(slash + 1);
  if (Status s = check_namespace_name(ns, "--policy-configmap"); !s.ok()) return s.error();
  auto cm = api.get(fmt::format("/api/v1/namespaces/{}/configmaps/{}", ns, name));
  if (!cm.ok()) return runtime_error(fmt::format("--policy-configmap {}: {}", ref, cm.error().summary()));
  const std::string text = string_at(object_at(*cm, "data"), "policy.yaml");
  if (text.empty()) return usage_error(fmt::format("--policy-configmap {}: no key policy.yaml", ref));
  return parse_policy(text, "configmap " + ref);
}

}  // namespace

int run_audit_command(const std::vector<std::string>& args) {
  po::options_description d("audit options");
  add_policy_flag(d);
  d.add_options()("policy-configmap", po::value<std::string>(),
                  "NAMESPACE/NAME: the policy.yaml of this ConfigMap instead of --policy (the chart's "
                  "<release namespace>/<fullname>-policy)")("since", po::value<std::string>()->default_value("24h"),
                                                            "pods created within this long (1m-720h)")(
      "namespace,n", po::value<std::string>(), "only pods of this namespace (default: all)")(
      "gpu-resource", po::value<std::vector<std::string>>()->composing(),
      "another resource name that counts as GPUs, repeatable")("timeout", po::value<std::string>()->default_value("1m"),
                                                               "the API's time in all; then exit 3");
  add_kube_flags(d);
  add_closing_flags(d, "human | json", "warn");
  auto parsed = parse_command_line(args, d);
  if (!parsed.ok()) return report_usage_failure(kCommand, parsed.error());
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate audit [--policy-configmap NS/NAME | --policy FILE|profile:NAME] [--since 24h] [-n NS]\n\n"
           "What enforce mode would block, read from the cluster and changing nothing: the nodes the agent\n"
           "would taint (and GPU nodes it never labelled, which enforce's affinity excludes), the accelerators\n"
           "each node sustains per demand rule, and the pods created within --since that enforce would have\n"
           "stopped at preflight, refused at admission or held Pending, or placed on another node.\n\n"
        << d << "\nexit codes: 0 the report, 2 usage or configuration, 3 the API failed\n";
    return print_help(out.str());
  }
  if (!parsed->paths.empty())
    return report_usage_failure(kCommand,
                                usage_error(fmt::format("unexpected argument {}", quote_value(parsed->paths[0]))));
  AuditInput in;
  auto since = parse_duration(vm["since"].as<std::string>(), "--since");
  if (!since.ok()) return report_usage_failure(kCommand, since.error());
  if (*since < std::chrono::minutes(1) || *since > std::chrono::hours(720))
    return report_usage_failure(kCommand, usage_error("--since: must be within [1m, 720h]"));
  in.since = std::chrono::duration_cast<std::chrono::seconds>(*since);
  if (vm.count("namespace")) {
    in.pod_namespace = vm["namespace"].as<std::string>();
    if (Status s = check_namespace_name(in.pod_namespace, "--namespace"); !s.ok())
      return report_usage_failure(kCommand, s.error());
  }
  if (vm.count("gpu-resource")) in.extra_gpu_resources = vm["gpu-resource"].as<std::vector<std::string>>();
  auto timeout = parse_timeout_flag(vm["timeout"].as<std::string>());
  if (!timeout.ok()) return report_usage_failure(kCommand, timeout.error());
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return report_usage_failure(kCommand, json.error());
  std::optional<Policy> local;
  if (!vm.count("policy-configmap")) {
    auto p = resolve_policy(vm["policy"].as<std::string>());
    if (!p.ok()) return report_usage_failure(kCommand, usage_error("--policy: " + p.error().message));
    local = std::move(*p);
  }
  auto api = one_shot_api(vm, *timeout);
  if (!api.ok()) return report_usage_failure(kCommand, api.error());
  if (!local) {
    auto p = configmap_policy(**api, vm["policy-configmap"].as<std::string>());
    if (!p.ok()) return report_usage_failure(kCommand, p.error());
    local = std::move(*p);
  }
  in.policy = &*local;
  in.now = std::chrono::system_clock::now();
  auto report = run_audit(**api, in);
  if (!report.ok()) return report_usage_failure(kCommand, report.error());
  if (*json) std::cout << audit_report_json(*report).dump(2) << "\n";
  else std::cout << render_audit_human(*report);
  return kExitOk;
}

}  // namespace iogate
