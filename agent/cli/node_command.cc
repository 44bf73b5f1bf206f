#include "cli/node_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "base/exit_codes.h"
#include "base/paths.h"
#include "base/quote.h"
#include "base/split_list.h"
#include "base/units.h"
#include "cli/api_connection.h"
#include "cli/command_line.h"
#include "cli/mode_exit.h"
#include "cli/signals.h"
#include "device/storage_stack.h"
#include "http/listener.h"
#include "node/labelled_check.h"
#include "node/node_prune.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

po::options_description node_flags() {
  const std::string once_deadline = format_duration_compact(NodeOptions{}.once_deadline.count());
  const std::string once_deadline_help = fmt::format(
      "--once: the Kubernetes API's time in all (the Node read, the writes, their retries; probes not counted); "
      "then exit 3 (default {})",
      once_deadline);
  po::options_description d("node options");
  add_policy_flag(d);
  d.add_options()("path", po::value<std::vector<std::string>>()->composing(),
                  "a data path to probe, [NAME=]PATH, repeatable (default: the policy's node.paths)")(
      "listen", po::value<std::string>()->default_value(":9560"),
      "HTTP address for /metrics /healthz /readyz /report; none: no server")(
      "interval", po::value<std::string>(), "time between probes of a path (default: node.interval, 6h)")(
      "jitter", po::value<std::string>(), "spread each wait by ±this fraction (default: node.jitter, 10%)")(
      "busy-util", po::value<std::string>(),
      "skip the probe when a device under the path is busier than this (default: node.busy_util, 50%)")(
      "busy-retry", po::value<std::string>(),
      "retry a skipped or failed probe after this long (default: node.busy_retry, 10m)")(
      "busy-window", po::value<std::string>()->default_value("1s"),
      "how long to watch /proc/diskstats for the busy check")(
      "taint-effect", po::value<std::string>(),
      "NoSchedule | PreferNoSchedule | NoExecute | none (default: node.taint_effect)")(
      "io-priority", po::value<std::string>()->default_value("idle"),
      "the probe's I/O class: idle | best-effort[/N] | none")(
      "once", po::bool_switch(), "probe every path once, write the results, print the report and exit")(
      "once-deadline", po::value<std::string>(), once_deadline_help.c_str())("node-name", po::value<std::string>(),
                                                                             "this node's name (default: $NODE_NAME)")(
      "gpus", po::value<std::string>(),
      "GPUs to scale per-GPU thresholds by (default: the node's nvidia.com/gpu + amd.com/gpu capacity)")(
      "no-api", po::bool_switch(), "never call the Kubernetes API: probe and serve metrics only")(
      "root", po::value<std::string>(), "read ROOT/proc and ROOT/sys (the host's, mounted into the container)")(
      "proc-root", po::value<std::string>(), "the host's /proc; must be ROOT/proc (with --sysfs-root ROOT/sys)")(
      "sysfs-root", po::value<std::string>(), "the host's /sys; must be ROOT/sys (with --proc-root ROOT/proc)");
  add_kube_flags(d);
  add_closing_flags(d, "--once output: human | json", "info");
  return d;
}

std::string env_or(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

Result<NodePath> parse_path_flag(const std::string& text) {
  NodePath p;
  size_t eq = text.find('=');
  if (!text.empty() && text[0] != '/' && eq != std::string::npos) {
    p.name = text.substr(0, eq);
    p.path = text.substr(eq + 1);
    bool ok = !p.name.empty() && p.name.size() <= 40 && p.name.front() != '-' && p.name.back() != '-';
    for (char c : p.name) ok &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok) {
      return usage_error(
          fmt::format("--path: name {} must be a lower-case DNS label of at most 40 characters", quote_value(p.name)));
    }
  } else {
    p.path = text;
  }
  if (p.path.empty() || p.path[0] != '/')
    return usage_error(fmt::format("--path: expected an absolute path, got {}", quote_value(text)));
  return p;
}

// lsblk and the probe read both trees under one root; two unrelated roots cannot be honoured.
Result<std::string> root_from_flags(const po::variables_map& vm) {
  std::string root = vm.count("root") ? vm["root"].as<std::string>() : "";
  for (auto [flag, leaf] : {std::pair{"proc-root", "/proc"}, std::pair{"sysfs-root", "/sys"}}) {
    if (!vm.count(flag)) continue;
    std::string given = strip_trailing_slashes(vm[flag].as<std::string>());
    if (given.size() < std::string(leaf).size() ||
        given.compare(given.size() - std::string(leaf).size(), std::string::npos, leaf) != 0) {
      return usage_error(fmt::format("--{}: expected ROOT{} (the host's root mounted at ROOT), got {}", flag, leaf,
                                     quote_value(given)));
    }
    std::string implied = given.substr(0, given.size() - std::string(leaf).size());
    if (implied.empty()) implied.push_back('/');
    if (!root.empty() && strip_trailing_slashes(root) != implied) {
      return usage_error(fmt::format("--{}: {} is not under the root {} that the other flags give", flag, given, root));
    }
    root = implied;
  }
  return root.empty() ? std::string("/") : root;
}

}  // namespace

Result<NodeOptions> parse_node_args(const std::vector<std::string>& args, std::string* help_text) {
  po::options_description flags = node_flags();
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) return parsed.error();
  const po::variables_map& vm = parsed->flags;
  NodeOptions o;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate node [--policy FILE|profile:NAME] --path [NAME=]PATH... [options]\n"
           "       iogate node prune [options]   remove what iogate wrote on Nodes and PVCs (--help)\n"
           "       iogate node check [options]   pass when the agent has labelled a Node (--help)\n\n"
           "The DaemonSet agent: probes this node's data paths on start and then every interval (at idle\n"
           "I/O priority, skipping busy devices), labels the node (iogate.io/disk-class, randread-iops,\n"
           "tier, mixed-media), taints it iogate.io/storage-below-policy and sets the StorageBelowPolicy\n"
           "condition when its best path is below policy, posts an Event when the verdict changes, and\n"
           "serves Prometheus metrics.\n\n"
        << flags
        << "\nexit codes: 0 stopped by SIGTERM/SIGINT (--once: pass or warn), 1 --once below policy,\n"
           "2 usage or configuration, 3 --once: a path not measured or the result not written within\n"
           "--once-deadline\n";
    *help_text = out.str();
    return o;
  }
  if (!parsed->paths.empty()) {
    return usage_error(
        fmt::format("unexpected argument {}; data paths are given with --path", quote_value(parsed->paths[0])));
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  o.policy = str("policy");
  if (vm.count("path")) {
    for (const std::string& text : vm["path"].as<std::vector<std::string>>()) {
      auto p = parse_path_flag(text);
      if (!p.ok()) return p.error();
      for (const NodePath& q : o.paths) {
        if (q.path == p->path) return usage_error(fmt::format("--path: {} given twice", p->path));
        if (!p->name.empty() && q.name == p->name)
          return usage_error(fmt::format("--path: name {} given twice", p->name));
      }
      o.paths.push_back(*p);
    }
  }
  o.listen = str("listen");
  if (!o.listen.empty() && o.listen != "none") {
    if (auto a = parse_listen_address(o.listen); !a.ok()) return a.error();
  }
  for (auto [flag, field] : {std::pair{"interval", &o.interval}, std::pair{"busy-retry", &o.busy_retry}}) {
    if (!vm.count(flag)) continue;
    auto d = parse_duration(str(flag), std::string("--") + flag);
    if (!d.ok()) return d.error();
    if (d->count() <= 0) return usage_error(fmt::format("--{}: must be more than 0", flag));
    *field = *d;
  }
  auto window = parse_duration(str("busy-window"), "--busy-window");
  if (!window.ok()) return window.error();
  if (*window < std::chrono::milliseconds(100) || *window > std::chrono::seconds(60)) {
    return usage_error("--busy-window: must be within [100ms, 60s]");
  }
  o.busy_window = std::chrono::duration_cast<std::chrono::milliseconds>(*window);
  if (vm.count("jitter")) {
    auto j = parse_fraction(str("jitter"), "--jitter");
    if (!j.ok()) return j.error();
    if (*j < 0 || *j > 0.5) return usage_error("--jitter: must be within [0%, 50%]");
    o.jitter = *j;
  }
  if (vm.count("busy-util")) {
    auto u = parse_fraction(str("busy-util"), "--busy-util");
    if (!u.ok()) return u.error();
    if (*u <= 0 || *u > 1) return usage_error("--busy-util: must be above 0% and at most 100%");
    o.busy_util_percent = *u * 100;
  }
  if (vm.count("taint-effect")) {
    auto e = parse_taint_effect(str("taint-effect"), "--taint-effect");
    if (!e.ok()) return e.error();
    o.taint_effect = *e;
  }
  auto prio = parse_io_priority(str("io-priority"), "--io-priority");
  if (!prio.ok()) return prio.error();
  o.io_priority = *prio;
  o.once = vm["once"].as<bool>();
  if (vm.count("once-deadline")) {
    if (!o.once) return usage_error("--once-deadline: only with --once");
    auto d = parse_duration(str("once-deadline"), "--once-deadline");
    if (!d.ok()) return d.error();
    if (*d < std::chrono::seconds(1) || *d > std::chrono::hours(1)) {
      return usage_error(
          fmt::format("--once-deadline: must be within [1s, 1h], got {}", quote_value(str("once-deadline"))));
    }
    o.once_deadline = *d;
  }
  o.node_name = vm.count("node-name") ? str("node-name") : env_or("NODE_NAME");
  if (vm.count("gpus")) {
    auto gpus = parse_integer(str("gpus"), "--gpus", 0, 4096);
    if (!gpus.ok()) return gpus.error();
    o.gpus = static_cast<int>(*gpus);
  }
  if (vm.count("kubeconfig")) o.kubeconfig = str("kubeconfig");
  if (vm.count("context")) o.kube_context = str("context");
  o.no_api = vm["no-api"].as<bool>();
  auto root = root_from_flags(vm);
  if (!root.ok()) return root.error();
  o.root = *root;
  if (Status s = check_root_flag(o.root); !s.ok()) return s.error();
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return json.error();
  o.json = *json;
  return o;
}

namespace {

// `iogate node prune`: the flags, then prune_iogate_keys (node/node_prune.h), a line per object.
int run_prune(const std::vector<std::string>& args) {
  po::options_description d("node prune options");
  add_kube_flags(d);
  d.add_options()("pvc-namespace", po::value<std::vector<std::string>>()->composing(),
                  "also remove iogate.io/ annotations from the PVCs of these namespaces (comma list, repeatable; "
                  "the chart passes its preflight namespaces)")("dry-run", po::bool_switch(),
                                                                "read and print what would be removed; write nothing")(
      "timeout", po::value<std::string>()->default_value("5m"),
      "the API's time in all (every read, write and retry); then exit 3");
  add_closing_flags(d, nullptr, "warn");
  auto parsed = parse_command_line(args, d);
  if (!parsed.ok()) return report_usage_failure("node prune", parsed.error());
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate node prune [--kubeconfig F] [--context NAME] [--pvc-namespace NS,...] [--dry-run]\n\n"
           "Removes what iogate wrote, and nothing else (the chart's post-delete hook runs it after helm uninstall):\n"
           "from every Node each iogate.io/ label, annotation and taint and the StorageBelowPolicy condition; from\n"
           "the PVCs of --pvc-namespace each iogate.io/ annotation (shared probe results, locks, job barriers).\n"
           "Pods are left alone: their iogate.io/ annotations record verdicts and the user's own inputs. Every\n"
           "write carries the resourceVersion it was computed from; a conflict re-reads the object.\n\n"
        << d
        << "\nprints a line per object changed (node/NAME pruned: 3 labels, 1 annotation, 1 taint, 1 condition)\n"
           "and a summary. exit codes: 0 done (nothing to remove included), 2 usage or configuration,\n"
           "3 an API failure on some object (the others are still pruned; each failure is printed)\n";
    return print_help(out.str());
  }
  if (!parsed->paths.empty()) {
    return report_usage_failure("node prune",
                                usage_error(fmt::format("unexpected argument {}", quote_value(parsed->paths[0]))));
  }
  PruneOptions o;
  o.dry_run = vm["dry-run"].as<bool>();
  if (vm.count("pvc-namespace")) {
    for (const std::string& text : vm["pvc-namespace"].as<std::vector<std::string>>()) {
      for (std::string_view item : split_list(text)) {
        std::string ns(item);
        if (Status s = check_namespace_name(ns, "--pvc-namespace"); !s.ok()) {
          return report_usage_failure("node prune", s.error());
        }
        if (std::find(o.pvc_namespaces.begin(), o.pvc_namespaces.end(), ns) == o.pvc_namespaces.end()) {
          o.pvc_namespaces.push_back(ns);
        }
      }
    }
  }
  auto timeout = parse_timeout_flag(vm["timeout"].as<std::string>());
  if (!timeout.ok()) return report_usage_failure("node prune", timeout.error());
  if (auto s = apply_closing_flags(vm); !s.ok()) return report_usage_failure("node prune", s.error());
  auto api = one_shot_api(vm, *timeout);
  if (!api.ok()) return report_usage_failure("node prune", api.error());

  PruneOutcome out = prune_iogate_keys(**api, o, [&](const PrunedObject& p) {
    std::printf("%s\n", pruned_object_line(p, o.dry_run).c_str());
    std::fflush(stdout);
  });
  int nodes = 0, pvcs = 0;
  for (const PrunedObject& p : out.pruned) ++(p.kind == PrunedKind::kNode ? nodes : pvcs);
  std::string pvc_part = o.pvc_namespaces.empty() ? "PVCs not pruned (no --pvc-namespace)"
                                                  : fmt::format("{} of {} PVCs in {}", pvcs, out.pvcs_seen,
                                                                fmt::join(o.pvc_namespaces, ", "));
  std::printf("%s %d of %d nodes, %s; %zu failure%s\n", o.dry_run ? "would prune" : "pruned", nodes, out.nodes_seen,
              pvc_part.c_str(), out.failures.size(), out.failures.size() == 1 ? "" : "s");
  for (const std::string& f : out.failures) std::fprintf(stderr, "iogate node prune: %s\n", f.c_str());
  return out.failures.empty() ? kExitOk : kExitRuntime;
}

// `iogate node check`: whether the agent has labelled a Node (node/labelled_check.h).
int run_check(const std::vector<std::string>& args) {
  po::options_description d("node check options");
  add_kube_flags(d);
  d.add_options()(
      "wait", po::value<std::string>()->default_value("0s"),
      "wait up to this long for a first labelled Node (an agent labels its node after its first probe round)")(
      "timeout", po::value<std::string>()->default_value("5m"), "the API's time in all; then exit 3");
  add_closing_flags(d, nullptr, "warn");
  auto parsed = parse_command_line(args, d);
  if (!parsed.ok()) return report_usage_failure("node check", parsed.error());
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate node check [--kubeconfig F] [--context NAME] [--wait D]\n\n"
           "Passes when at least one Node carries an iogate.io/ label, i.e. the node agent has measured and\n"
           "labelled it (the chart's helm test runs it).\n\n"
        << d
        << "\nexit codes: 0 a node is labelled, 2 usage or configuration, 3 none is (the message names the\n"
           "nodeAgent values to check) or the API failed\n";
    return print_help(out.str());
  }
  if (!parsed->paths.empty()) {
    return report_usage_failure("node check",
                                usage_error(fmt::format("unexpected argument {}", quote_value(parsed->paths[0]))));
  }
  NodeCheckOptions o;
  auto wait = parse_duration(vm["wait"].as<std::string>(), "--wait");
  if (!wait.ok()) return report_usage_failure("node check", wait.error());
  if (*wait < std::chrono::seconds(0) || *wait > std::chrono::hours(1)) {
    return report_usage_failure("node check", usage_error("--wait: must be within [0s, 1h]"));
  }
  o.wait = std::chrono::duration_cast<std::chrono::milliseconds>(*wait);
  auto timeout = parse_timeout_flag(vm["timeout"].as<std::string>());
  if (!timeout.ok()) return report_usage_failure("node check", timeout.error());
  if (auto s = apply_closing_flags(vm); !s.ok()) return report_usage_failure("node check", s.error());
  auto api = one_shot_api(vm, *timeout + o.wait);
  if (!api.ok()) return report_usage_failure("node check", api.error());
  auto lines = check_nodes_labelled(**api, o);
  if (!lines.ok()) {
    std::fprintf(stderr, "iogate node check: %s\n", lines.error().message.c_str());
    return kExitRuntime;
  }
  for (const std::string& line : *lines) std::printf("%s\n", line.c_str());
  return kExitOk;
}

}  // namespace

int run_node_command(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "prune") return run_prune({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "check") return run_check({args.begin() + 1, args.end()});
  std::string help;
  auto options = parse_node_args(args, &help);
  if (auto done = parsing_exit("node", options, help)) return *done;
  StopSignals signals;
  return finish_mode("node", run_node_agent(*options, signals.stop()), options->json);
}

}  // namespace iogate
