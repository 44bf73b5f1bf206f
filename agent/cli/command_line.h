// What every subcommand's parsing shares: fio/kubectl-style flags plus PATH arguments.
#pragma once

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

}  // namespace iogate
