// What every mode (run_preflight, run_node_agent, run_webhook) hands the CLI: its result or the
// Error that ended it. A mode never prints an error or picks an exit code; the CLI does both, in
// one place (cli/mode_exit.h), with the codes of base/exit_codes.h.
//
// - An Error: the run ended before the mode had anything to show (a bad policy, flag, certificate
//   or kubeconfig; a listener that cannot start). The CLI prints "iogate MODE: message" on stderr
//   and exits with its kind's code (usage 2, runtime 3); nothing on stdout.
// - A ModeResult: the run came to a conclusion, `report` is what goes on stdout (none: nothing),
//   and `status` says how the process ends. A failure the mode handled is a result, not an Error:
//   it is logged by the mode and stated in its report, and the status is what the mode's rules
//   make of it. So preflight under on_error fail-open reports its error and ends kOk (exit 0);
//   fail-closed, the same report ends kFailed (exit 3).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace iogate {

// How a run that came to a conclusion ends (exit_code_for in base/exit_codes.h gives the code).
enum class ModeStatus {
  kOk,           // passed, warned, mode off, a fail-open error, a loop stopped by a signal (0)
  kBelowPolicy,  // below policy in enforce mode (1)
  kFailed,       // not measured, not recorded, or interrupted: nobody vouched for the storage (3)
};

// A report in both forms; --output-format picks one.
struct ModeReport {
  nlohmann::json json;  // printed as dump(2) and a newline
  std::string human;    // printed as is
};

struct ModeResult {
  ModeStatus status = ModeStatus::kOk;
  std::optional<ModeReport> report;  // none: the mode prints nothing (a loop, an interrupted --once)
};

using ModeOutcome = Result<ModeResult>;

}  // namespace iogate
