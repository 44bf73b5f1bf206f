#include <doctest/doctest.h>

#include <set>
#include <string>

#include "probe/stop_reason.h"

using namespace iogate;

TEST_CASE("stop reasons: the reports' strings, distinct, and read back") {
  const StopReason all[] = {StopReason::kNone,           StopReason::kRuntime,  StopReason::kSignal,
                            StopReason::kError,          StopReason::kSettled,  StopReason::kAboveThreshold,
                            StopReason::kBelowThreshold, StopReason::kComplete, StopReason::kFiles,
                            StopReason::kEntries,        StopReason::kTime};
  std::set<std::string> names;
  for (StopReason r : all) {
    names.insert(std::string(stop_reason_name(r)));
    REQUIRE(parse_stop_reason(stop_reason_name(r)).has_value());
    CHECK(*parse_stop_reason(stop_reason_name(r)) == r);
  }
  CHECK(names.size() == std::size(all));
  // The strings iogate.report/v1 and the dataset report have always carried.
  CHECK(stop_reason_name(StopReason::kNone) == "");
  CHECK(stop_reason_name(StopReason::kAboveThreshold) == "above-threshold");
  CHECK(stop_reason_name(StopReason::kBelowThreshold) == "below-threshold");
  CHECK(stop_reason_name(StopReason::kComplete) == "complete");
  CHECK_FALSE(parse_stop_reason("Settled").has_value());
  CHECK_FALSE(parse_stop_reason("stopped").has_value());
}

TEST_CASE("early stops are the three reasons EarlyStop gives") {
  CHECK(is_early_stop(StopReason::kSettled));
  CHECK(is_early_stop(StopReason::kAboveThreshold));
  CHECK(is_early_stop(StopReason::kBelowThreshold));
  CHECK_FALSE(is_early_stop(StopReason::kRuntime));
  CHECK_FALSE(is_early_stop(StopReason::kSignal));
  CHECK_FALSE(is_early_stop(StopReason::kNone));
}
