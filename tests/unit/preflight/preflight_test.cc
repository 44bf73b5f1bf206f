#include <doctest/doctest.h>

#include <atomic>
#include <string>

#include <fmt/format.h>

#include "preflight/preflight.h"
#include "temp_tree.h"

using namespace iogate;
using testing::TempTree;

namespace {

// run_preflight without the API, on an empty directory, under a policy of `body`.
ModeOutcome preflight(const TempTree& dir, const std::string& body) {
  PreflightOptions o;
  o.paths = {dir.path("data")};
  dir.write("data/.keep", "");
  o.policy = dir.write("policy.yaml", "apiVersion: iogate.io/v1\nkind: StoragePolicy\n" + body);
  o.no_api = true;
  std::atomic<bool> stop{false};
  return run_preflight(o, stop);
}

// The probe cannot start: the 2 s deadline leaves less than the 3 s kept to record the verdict.
constexpr const char* kNoTimeToProbe =
    "deadline: 2s\nworkload: {ramp: 0s, runtime: 1s, size: 4m}\nrules: [{name: floor, min_iops: 1}]\n";

TEST_CASE("run_preflight: in warn mode a failure under fail-closed lets the pod start, saying what enforce would do") {
  TempTree dir;
  ModeOutcome out = preflight(dir, std::string("mode: warn\non_error: fail-closed\n") + kNoTimeToProbe);
  REQUIRE(out.ok());
  CHECK(out->status == ModeStatus::kOk);
  REQUIRE(out->report);
  CHECK(out->report->json["outcome"] == "error");
  CHECK(out->report->json["exit_code"] == 0);
  CHECK(out->report->json["would_block"].get<std::string>().rfind("preflight would exit 3 (on_error fail-closed): ",
                                                                  0) == 0);
  CHECK(out->report->human.find("would block in enforce mode: preflight would exit 3") != std::string::npos);
}

}  // namespace

TEST_CASE("run_preflight: a bad policy is a usage error, no report") {
  TempTree dir;
  ModeOutcome out = preflight(dir, "rules: [{name: a, min_iops: fast}]\n");
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().kind == ErrorKind::kUsage);
  CHECK(out.error().message.rfind("--policy: ", 0) == 0);
}

TEST_CASE("run_preflight: mode off is a result, kOk, with the report saying exit 0") {
  TempTree dir;
  ModeOutcome out = preflight(dir, "mode: off\nrules: [{name: floor, min_iops: 10}]\n");
  REQUIRE(out.ok());
  CHECK(out->status == ModeStatus::kOk);
  REQUIRE(out->report);
  CHECK(out->report->json["outcome"] == "off");
  CHECK(out->report->json["exit_code"] == 0);
  CHECK(out->report->human.find("verdict  off  exit 0\n") != std::string::npos);
}

TEST_CASE("run_preflight: a failure under on_error is a result with the report, its status as on_error says") {
  struct Case {
    const char* on_error;
    ModeStatus status;
    int exit_code;
  };
  for (Case c : {Case{"fail-open", ModeStatus::kOk, 0}, Case{"fail-closed", ModeStatus::kFailed, 3}}) {
    CAPTURE(c.on_error);
    TempTree dir;
    ModeOutcome out = preflight(dir, std::string("mode: enforce\non_error: ") + c.on_error + "\n" + kNoTimeToProbe);
    REQUIRE(out.ok());
    CHECK(out->status == c.status);
    REQUIRE(out->report);
    CHECK(out->report->json["outcome"] == "error");
    CHECK(out->report->json["exit_code"] == c.exit_code);
    CHECK(out->report->json["error"].get<std::string>().rfind("deadline 2s: ", 0) == 0);
    CHECK(out->report->human.find(fmt::format("exit {}\n", c.exit_code)) != std::string::npos);
  }
}
