#include <doctest/doctest.h>

#include "report/checkpoint_report.h"

using namespace iogate;

namespace {

CheckpointProbeResult result() {
  CheckpointProbeResult r;
  r.directory = "/ckpt";
  r.ranks = 2;
  r.saves = {{8 << 20, 0.2}, {64 << 20, 1.4}};
  r.restores = {{64 << 20, 0.7}};
  r.save = {0.02, 48e6};
  r.restore = {0, 96e6};
  r.bytes_written = 2 * (72 << 20);
  r.bytes_read = 2 * (64 << 20);
  r.round_bytes_limit = 128 << 20;
  r.measured_s = 2.5;
  r.stop_reason = StopReason::kSettled;
  return r;
}

}  // namespace

TEST_CASE("checkpoint report: every key, one type each, rates a rank and in all") {
  nlohmann::json j = checkpoint_probe_to_json(result(), nullptr, "2026-12-08T00:00:00Z");
  CHECK(j["schema"] == "iogate.report/v1");
  CHECK(j["mode"] == "checkpoint");
  CHECK(j["target"]["path"] == "/ckpt");
  CHECK(j["storage"].is_null());
  CHECK(j["ranks"] == 2);
  REQUIRE(j["saves"].size() == 2);
  CHECK(j["saves"][1]["rank_bytes"] == 64 << 20);
  CHECK(j["saves"][1]["rank_bytes_per_s"].get<double>() == doctest::Approx(double(64 << 20) / 1.4));
  CHECK(j["save"]["fixed_seconds"] == 0.02);
  CHECK(j["save"]["rank_bytes_per_s"] == 48e6);
  CHECK(j["save"]["bytes_per_s"] == 96e6);
  CHECK(j["restore"]["bytes_per_s"] == 192e6);
  CHECK(j["bytes_written"] == 2 * (72 << 20));
  CHECK(j["measured_ns"] == 2'500'000'000ull);
  CHECK(j["stop_reason"] == "settled");
}

TEST_CASE("checkpoint report: the rounds, the lines and what was written, for a person") {
  std::string h = render_checkpoint_human(result(), nullptr);
  CHECK(h.find("checkpoint  2 ranks on /ckpt") == 0);
  CHECK(h.find("save 2") != std::string::npos);
  CHECK(h.find("restore 1") != std::string::npos);
  CHECK(h.find("save        48 MB/s a rank, 96 MB/s in all, + 20.00 ms a save") != std::string::npos);
  CHECK(h.find("restore     96 MB/s a rank, 192 MB/s in all") != std::string::npos);
  CHECK(h.find("(settled)") != std::string::npos);
}
