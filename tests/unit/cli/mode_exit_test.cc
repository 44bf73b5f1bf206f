#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli/mode_exit.h"

using namespace iogate;

namespace {

struct Ended {
  int code;
  std::string out, err;
};

Ended finish(const ModeOutcome& outcome, bool json) {
  std::ostringstream out, err;
  int code = finish_mode("node", outcome, json, out, err);
  return {code, out.str(), err.str()};
}

ModeResult with_report(ModeStatus status) {
  return ModeResult{status, ModeReport{nlohmann::json{{"outcome", "x"}}, "human report\n"}};
}

}  // namespace

TEST_CASE("finish_mode: an Error is one line on stderr and its kind's code, nothing on stdout") {
  Ended usage = finish(usage_error("--policy: no such file"), false);
  CHECK(usage.code == 2);
  CHECK(usage.err == "iogate node: --policy: no such file\n");
  CHECK(usage.out.empty());
  Ended runtime = finish(runtime_error("cannot set up the TLS context"), true);
  CHECK(runtime.code == 3);
  CHECK(runtime.err == "iogate node: cannot set up the TLS context\n");
  CHECK(runtime.out.empty());
}

TEST_CASE("finish_mode: a result is its report on stdout, as --output-format says, and its status's code") {
  struct Case {
    ModeStatus status;
    int code;
  };
  for (Case c : {Case{ModeStatus::kOk, 0}, Case{ModeStatus::kBelowPolicy, 1}, Case{ModeStatus::kFailed, 3}}) {
    CAPTURE(c.code);
    Ended human = finish(with_report(c.status), false);
    CHECK(human.code == c.code);
    CHECK(human.out == "human report\n");
    CHECK(human.err.empty());
    Ended json = finish(with_report(c.status), true);
    CHECK(json.code == c.code);
    CHECK(json.out == "{\n  \"outcome\": \"x\"\n}\n");
    CHECK(json.err.empty());
  }
}

TEST_CASE("finish_mode: a result without a report prints nothing") {
  Ended stopped = finish(ModeResult{ModeStatus::kOk, std::nullopt}, true);
  CHECK(stopped.code == 0);
  CHECK(stopped.out.empty());
  CHECK(stopped.err.empty());
  Ended interrupted = finish(ModeResult{ModeStatus::kFailed, std::nullopt}, false);
  CHECK(interrupted.code == 3);
  CHECK(interrupted.out.empty());
}
