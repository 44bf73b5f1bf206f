// The process exit codes, the same for every mode (documented in docs/reference.md).
#pragma once

#include "base/result.h"

namespace iogate {

inline constexpr int kExitOk = 0;           // ok, policy passed or only warned
inline constexpr int kExitBelowPolicy = 1;  // below policy in enforce mode
inline constexpr int kExitUsage = 2;        // bad flag, value or configuration
inline constexpr int kExitRuntime = 3;      // I/O, kernel or API failure, or interrupted

inline int exit_code_for(const Error& e) { return e.kind == ErrorKind::kUsage ? kExitUsage : kExitRuntime; }

}  // namespace iogate
