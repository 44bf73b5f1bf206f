// `iogate policy check FILE|profile:NAME [--output-format human|json] [--gpus N]`: validates a
// policy and prints it with defaults filled in and per-GPU floors resolved (exit 0 valid, 2 not,
// with the one-line error). `iogate policy profiles` lists the built-in profiles, and
// `iogate policy show NAME` prints one's YAML with the reasoning behind its numbers.
#pragma once

#include <string>
#include <vector>

namespace iogate {

int run_policy_command(const std::vector<std::string>& args);

}  // namespace iogate
