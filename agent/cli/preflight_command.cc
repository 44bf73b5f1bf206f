#include "cli/preflight_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "base/units.h"
#include "cli/command_line.h"
#include "cli/mode_exit.h"
#include "cli/signals.h"
#include "device/storage_stack.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

po::options_description preflight_flags() {
  po::options_description d("preflight options");
  add_policy_flag(d);
  add_workload_flags(d);
  d.add_options()("gpus", po::value<std::string>(),
                  "GPUs to scale per-GPU thresholds by (default: the pod's nvidia.com/gpu + amd.com/gpu limits)")(
      "pod", po::value<std::string>(), "pod name (default: $POD_NAME)")(
      "namespace", po::value<std::string>(), "pod namespace (default: $POD_NAMESPACE, else the service account's)")(
      "node", po::value<std::string>(), "node name (default: $NODE_NAME, else the pod's spec.nodeName)")(
      "container", po::value<std::string>(), "this container's name, to find its mounts (default: $CONTAINER_NAME)")(
      "no-api", po::bool_switch(), "never call the Kubernetes API: print the verdict only")(
      "root", po::value<std::string>()->default_value("/"), "read DIR/proc and DIR/sys (the host's, in a container)");
  add_kube_flags(d);
  add_closing_flags(d, "human | json", "info");
  return d;
}

}  // namespace

Result<PreflightOptions> parse_preflight_args(const std::vector<std::string>& args, std::string* help_text) {
  po::options_description flags = preflight_flags();
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) return parsed.error();
  const po::variables_map& vm = parsed->flags;
  PreflightOptions o;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate preflight PATH... [--policy FILE|profile:NAME] [options]\n\n"
           "Probes the dataset volume(s) at PATH, judges them against the policy, records the verdict on\n"
           "the pod (annotations, an Event) and exits 1 when they are below policy in enforce mode, so\n"
           "the training container never starts on storage that would starve its GPUs.\n\n"
        << flags
        << "\nexit codes: 0 pass or warn (or fail-open error), 1 below policy, 2 usage or configuration,\n"
           "3 probe or API failure (fail-closed)\n";
    *help_text = out.str();
    return o;
  }
  o.paths = parsed->paths;
  if (o.paths.empty())
    return usage_error("PATH: missing; usage: iogate preflight PATH... [--policy FILE|profile:NAME]");
  // Checked before anything is logged or probed: a dataset path that is not there is the pod
  // spec's mistake (a wrong mountPath), reported as one line.
  for (const std::string& path : o.paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return usage_error(fmt::format("PATH: {}: {}", path, std::strerror(errno)));
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  o.policy = str("policy");
  WorkloadFlags w = workload_flags(vm);
  o.workload = w.workload;
  o.accelerator = w.accelerator;
  if (vm.count("gpus")) {
    auto gpus = parse_integer(str("gpus"), "--gpus", 0, 4096);
    if (!gpus.ok()) return gpus.error();
    o.gpus = static_cast<int>(*gpus);
  }
  o.pod_name = vm.count("pod") ? str("pod") : env_or("POD_NAME");
  o.pod_namespace = vm.count("namespace") ? str("namespace") : env_or("POD_NAMESPACE");
  o.node_name = vm.count("node") ? str("node") : env_or("NODE_NAME");
  o.container_name = vm.count("container") ? str("container") : env_or("CONTAINER_NAME");
  if (vm.count("kubeconfig")) o.kubeconfig = str("kubeconfig");
  if (vm.count("context")) o.kube_context = str("context");
  o.no_api = vm["no-api"].as<bool>();
  o.root = str("root");
  if (Status s = check_root_flag(o.root); !s.ok()) return s.error();
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return json.error();
  o.json = *json;
  return o;
}

int run_preflight_command(const std::vector<std::string>& args) {
  std::string help;
  auto options = parse_preflight_args(args, &help);
  if (auto done = parsing_exit("preflight", options, help)) return *done;
  StopSignals signals;
  return finish_mode("preflight", run_preflight(*options, signals.stop()), options->json);
}

}  // namespace iogate
