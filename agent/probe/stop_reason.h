// Why a run of the bench ended. One set for every loop (the probe, the dataset loader, the dataset
// scan), each naming the subset it uses; the reports' "stop_reason" strings come from
// stop_reason_name alone.
#pragma once

#include <optional>
#include <string_view>

namespace iogate {

enum class StopReason {
  kNone,            // "": still running, or not run
  kRuntime,         // "runtime": ran its full time
  kSignal,          // "signal": stopped by SIGTERM/SIGINT; the figures cover part of the run
  kError,           // "error": a job failed
  kSettled,         // "settled": the early stop's interval is narrow enough (EarlyStop)
  kAboveThreshold,  // "above-threshold": clearly above the early stop's threshold
  kBelowThreshold,  // "below-threshold": clearly below it
  kComplete,        // "complete": a dataset probe or scan did all it had to
  kFiles,           // "files": the dataset loader read every file it was given; the scan listed its file budget
  kEntries,         // "entries": the dataset scan's entry budget ran out
  kTime,            // "time": the dataset scan's time budget ran out
};

std::string_view stop_reason_name(StopReason r);
// The inverse, for reports read back (a result shared on a PVC); nullopt for a name not above.
std::optional<StopReason> parse_stop_reason(std::string_view name);
// Settled, above or below the threshold: the early stop ended the run.
bool is_early_stop(StopReason r);

}  // namespace iogate
