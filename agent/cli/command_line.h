// What every subcommand's parsing shares: fio/kubectl-style flags plus PATH arguments.
#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/result.h"

namespace iogate {

struct ParsedCommandLine {
  boost::program_options::variables_map flags;
  std::vector<std::string> paths;  // the positional arguments
};

// Parses `args` against `flags`; the positional arguments become `paths`. A boost error (unknown
// option, missing value) becomes a usage error with boost's one-line message.
Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& args,
                                             const boost::program_options::options_description& flags);

// "human" → false, "json" → true; anything else is a usage error naming --output-format.
Result<bool> parse_output_format_json(const std::string& text);

// The flags that end every command's list: --output-format where the command prints a report
// (`output_help`; null where it does not), --log-level with the command's default (info for the
// Kubernetes modes, which run unattended; warn for the tools), --log-format and --help.
void add_closing_flags(boost::program_options::options_description& flags, const char* output_help,
                       const char* log_level);

// --kubeconfig FILE and --context NAME, the same for every mode that talks to the API
// (kube/kube_config.h's resolve_kube_config reads them).
void add_kube_flags(boost::program_options::options_description& flags);

// --policy FILE|profile:NAME, by default the built-in kDefaultProfile (policy/policy.h), whose
// mode is warn: a command run without a policy judges in the job's units and blocks nothing.
void add_policy_flag(boost::program_options::options_description& flags);

// --workload NAME --accelerator NAME: MLPerf Storage's named workload for every demand rule of the
// policy (policy.h's apply_named_workload), as MLPerf Storage's CLI takes --model and --accelerator-type.
void add_workload_flags(boost::program_options::options_description& flags);
struct WorkloadFlags {
  std::string workload, accelerator;  // both empty: the policy's own demand
};
WorkloadFlags workload_flags(const boost::program_options::variables_map& vm);

// Sets up the logger from --log-level and --log-format; true where --output-format is json.
Result<bool> apply_closing_flags(const boost::program_options::variables_map& vm);

// Prints "iogate COMMAND: message" (on `err`: stderr but for tests), returns the error's exit code.
int report_usage_failure(const char* command, const Error& e, std::ostream& err = std::cerr);
int print_help(const std::string& help);  // prints to stdout, returns 0

// How every subcommand ends its parsing: an error is one line "iogate COMMAND: message" on stderr
// and its exit code; --help prints `help` and exits 0. nullopt: go on and run.
template <class T>
std::optional<int> parsing_exit(const char* command, const Result<T>& parsed, const std::string& help) {
  if (!parsed.ok()) return report_usage_failure(command, parsed.error());
  if (!help.empty()) return print_help(help);
  return std::nullopt;
}

}  // namespace iogate
