// The process exit codes, the same for every mode (documented in docs/reference.md), and the one
// mapping to them from an error's kind and from a mode's status. The CLI ends the process with
// them; preflight's report states the code its status gives (the report's exit_code).
#pragma once

#include "base/mode_outcome.h"
#include "base/result.h"

namespace iogate {

inline constexpr int kExitOk = 0;           // ok, policy passed or only warned
inline constexpr int kExitBelowPolicy = 1;  // below policy in enforce mode
inline constexpr int kExitUsage = 2;        // bad flag, value or configuration
inline constexpr int kExitRuntime = 3;      // I/O, kernel or API failure, or interrupted

inline int exit_code_for(const Error& e) { return e.kind == ErrorKind::kUsage ? kExitUsage : kExitRuntime; }

inline int exit_code_for(ModeStatus s) {
  switch (s) {
    case ModeStatus::kOk: return kExitOk;
    case ModeStatus::kBelowPolicy: return kExitBelowPolicy;
    case ModeStatus::kFailed: return kExitRuntime;
  }
  return kExitRuntime;
}

}  // namespace iogate
