#include "probe/stop_reason.h"

namespace iogate {
namespace {

constexpr StopReason kAll[] = {StopReason::kNone,           StopReason::kRuntime,  StopReason::kSignal,
                               StopReason::kError,          StopReason::kSettled,  StopReason::kAboveThreshold,
                               StopReason::kBelowThreshold, StopReason::kComplete, StopReason::kFiles,
                               StopReason::kEntries,        StopReason::kTime};

}  // namespace

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kNone: return "";
    case StopReason::kRuntime: return "runtime";
    case StopReason::kSignal: return "signal";
    case StopReason::kError: return "error";
    case StopReason::kSettled: return "settled";
    case StopReason::kAboveThreshold: return "above-threshold";
    case StopReason::kBelowThreshold: return "below-threshold";
    case StopReason::kComplete: return "complete";
    case StopReason::kFiles: return "files";
    case StopReason::kEntries: return "entries";
    case StopReason::kTime: return "time";
  }
  return "";
}

std::optional<StopReason> parse_stop_reason(std::string_view name) {
  for (StopReason r : kAll) {
    if (stop_reason_name(r) == name) return r;
  }
  return std::nullopt;
}

bool is_early_stop(StopReason r) {
  return r == StopReason::kSettled || r == StopReason::kAboveThreshold || r == StopReason::kBelowThreshold;
}

}  // namespace iogate
