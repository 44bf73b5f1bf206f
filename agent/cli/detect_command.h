// `iogate detect PATH [--root DIR] [--output-format human|json]`: the storage stack under PATH.
#pragma once

#include <string>
#include <vector>

namespace iogate {

int run_detect_command(const std::vector<std::string>& args);

}  // namespace iogate
