#include "cli/command_line.h"

#include <cstdio>

#include "base/exit_codes.h"
#include "base/quote.h"
#include "cli/logging.h"
#include "policy/policy.h"

namespace iogate {
namespace po = boost::program_options;

Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& args,
                                             const po::options_description& flags) {
  po::options_description hidden;
  hidden.add_options()("positional-argument", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description pos;
  pos.add("positional-argument", -1);
  ParsedCommandLine out;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), out.flags);
    po::notify(out.flags);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (out.flags.count("positional-argument"))
    out.paths = out.flags["positional-argument"].as<std::vector<std::string>>();
  return out;
}

Result<bool> parse_output_format_json(const std::string& text) {
  if (text == "human") return false;
  if (text == "json") return true;
  return usage_error("--output-format: expected human or json, got " + quote_value(text));
}

void add_closing_flags(po::options_description& flags, const char* output_help, const char* log_level) {
  if (output_help) flags.add_options()("output-format", po::value<std::string>()->default_value("human"), output_help);
  flags.add_options()("log-level", po::value<std::string>()->default_value(log_level),
                      "trace | debug | info | warn | error | off")(
      "log-format", po::value<std::string>()->default_value("text"), "text | json")("help,h", "this help");
}

void add_kube_flags(po::options_description& flags) {
  flags.add_options()("kubeconfig", po::value<std::string>(),
                      "kubeconfig file out of cluster, read alone (default: in-cluster, else every file of "
                      "$KUBECONFIG merged, else ~/.kube/config)")(
      "context", po::value<std::string>(), "the kubeconfig's context to use (default: its current-context)");
}

void add_policy_flag(po::options_description& flags) {
  flags.add_options()("policy", po::value<std::string>()->default_value("profile:" + std::string(kDefaultProfile)),
                      "policy file (YAML or JSON), or profile:NAME (iogate policy profiles); a policy that names "
                      "no mode is warn: it records what enforce would block and blocks nothing");
}

void add_workload_flags(po::options_description& flags) {
  const std::string known = named_workload_list();
  flags.add_options()("workload", po::value<std::string>(),
                      ("judge the demand rules for MLPerf Storage's workload: " + known).c_str())(
      "accelerator", po::value<std::string>(), "the workload's accelerator (a100, h100, b200: as listed above)");
}

WorkloadFlags workload_flags(const po::variables_map& vm) {
  WorkloadFlags w;
  if (vm.count("workload")) w.workload = vm["workload"].as<std::string>();
  if (vm.count("accelerator")) w.accelerator = vm["accelerator"].as<std::string>();
  return w;
}

Result<bool> apply_closing_flags(const po::variables_map& vm) {
  bool json = false;
  if (vm.count("output-format")) {
    auto format = parse_output_format_json(vm["output-format"].as<std::string>());
    if (!format.ok()) return format.error();
    json = *format;
  }
  if (Status s = setup_logging(vm["log-level"].as<std::string>(), vm["log-format"].as<std::string>()); !s.ok()) {
    return s.error();
  }
  return json;
}

int report_usage_failure(const char* command, const Error& e, std::ostream& err) {
  err << "iogate " << command << ": " << e.message << "\n";
  return exit_code_for(e);
}

int print_help(const std::string& help) {
  std::fputs(help.c_str(), stdout);
  return kExitOk;
}

}  // namespace iogate
