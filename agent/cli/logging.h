// The process logger: spdlog to stderr, text or JSON lines (--log-format json) for collectors.
// The only global state in iogate. Never log a token, key or Authorization header.
#pragma once

#include <string_view>

#include "base/result.h"

namespace iogate {

Status setup_logging(std::string_view level, std::string_view format);

}  // namespace iogate
