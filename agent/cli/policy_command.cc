#include "cli/policy_command.h"

#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "base/exit_codes.h"
#include "base/units.h"
#include "cli/command_line.h"
#include "policy/policy.h"
#include "policy/policy_render.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

constexpr const char kUsage[] =
    "usage: iogate policy check FILE|profile:NAME [--output-format human|json] [--gpus N] [--workload W --accelerator "
    "A]\n"
    "       iogate policy profiles\n"
    "       iogate policy show NAME\n";

int usage(const std::string& message) {
  std::fprintf(stderr, "iogate policy: %s\n", message.c_str());
  return kExitUsage;
}

int run_check(const std::vector<std::string>& args) {
  po::options_description flags("policy check options");
  flags.add_options()("output-format", po::value<std::string>()->default_value("human"), "human | json")(
      "gpus", po::value<std::string>(), "resolve per-GPU floors for a pod with N GPUs");
  add_workload_flags(flags);
  flags.add_options()("help,h", "this help");
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) return usage(parsed.error().message);
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::cout << kUsage << "\nValidates a policy file (or a built-in profile) and prints it as it will be enforced.\n\n"
              << flags;
    return kExitOk;
  }
  if (parsed->paths.size() != 1) {
    return usage(parsed->paths.empty() ? "FILE: missing; usage: iogate policy check FILE|profile:NAME"
                                       : "FILE: expected one");
  }
  auto json = parse_output_format_json(vm["output-format"].as<std::string>());
  if (!json.ok()) return usage(json.error().message);
  std::optional<int> gpus;
  if (vm.count("gpus")) {
    auto n = parse_integer(vm["gpus"].as<std::string>(), "--gpus", 0, 4096);
    if (!n.ok()) return usage(n.error().message);
    gpus = static_cast<int>(*n);
  }
  auto policy = resolve_policy(parsed->paths[0]);
  if (!policy.ok()) {
    std::fprintf(stderr, "iogate policy check: %s\n", policy.error().message.c_str());
    return exit_code_for(policy.error());
  }
  WorkloadFlags w = workload_flags(vm);
  if (Status s = apply_named_workload(*policy, w.workload, w.accelerator); !s.ok()) return usage(s.error().message);
  if (*json) {
    std::cout << policy_to_json(*policy, gpus).dump(2) << "\n";
  } else {
    std::cout << render_policy_human(*policy, gpus);
  }
  return kExitOk;
}

int run_profiles() {
  size_t width = 0;
  for (const std::string& name : builtin_profile_names()) width = std::max(width, name.size());
  for (const std::string& name : builtin_profile_names()) {
    std::cout << fmt::format("{:<{}}   {}\n", name, width, builtin_profile_summary(name));
  }
  return kExitOk;
}

int run_show(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage("show: expected one profile name (iogate policy profiles lists them)");
  auto text = builtin_profile_text(args[0]);
  if (!text.ok()) return usage(text.error().message);
  std::cout << *text;
  return kExitOk;
}

}  // namespace

int run_policy_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string& sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "check") return run_check(rest);
  if (sub == "profiles") return run_profiles();
  if (sub == "show") return run_show(rest);
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  return usage(fmt::format("unknown subcommand \"{}\" (check, profiles or show)", sub));
}

}  // namespace iogate
