// `iogate node`: flags → NodeOptions → run_node_agent (node/node.h).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "node/node.h"

namespace iogate {

// Parses the flags; `help_text` is filled (and the options empty) for --help.
Result<NodeOptions> parse_node_args(const std::vector<std::string>& args, std::string* help_text);
int run_node_command(const std::vector<std::string>& args);

}  // namespace iogate
