// `iogate preflight PATH... --policy F`: flags and environment (the downward API's POD_NAME,
// POD_NAMESPACE, NODE_NAME) into PreflightOptions, then the run, the output and the exit code.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "preflight/preflight.h"

namespace iogate {

// `help_text` is filled (and nothing else) for --help.
Result<PreflightOptions> parse_preflight_args(const std::vector<std::string>& args, std::string* help_text);

int run_preflight_command(const std::vector<std::string>& args);

}  // namespace iogate
