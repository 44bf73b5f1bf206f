#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>

#include "checkpoint/checkpoint_probe.h"
#include "temp_tree.h"

using namespace iogate;
using namespace std::chrono_literals;

TEST_CASE("fit_rounds: a line through rounds of growing size") {
  // t = 0.05 + bytes / 100 MB/s
  std::vector<CheckpointRound> rounds;
  for (uint64_t mb : {8, 32, 128, 512}) rounds.push_back({mb * 1'000'000, 0.05 + double(mb) / 100});
  FittedLine l = fit_rounds(rounds);
  CHECK(l.fixed_s == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(l.bytes_per_s == doctest::Approx(100e6).epsilon(1e-6));
}

TEST_CASE("fit_rounds: through the origin where the intercept would be negative, or the sizes are one") {
  // Rounds whose small one ran fast (a cache absorbed it): the intercept would go below 0.
  FittedLine l = fit_rounds({{10'000'000, 0.01}, {100'000'000, 1.0}});
  CHECK(l.fixed_s == 0);
  CHECK(l.bytes_per_s == doctest::Approx((1e14 + 1e16) / (1e5 + 1e8)).epsilon(1e-9));
  FittedLine same = fit_rounds({{50'000'000, 1.0}, {50'000'000, 0.5}});
  CHECK(same.fixed_s == 0);
  CHECK(same.bytes_per_s == doctest::Approx(2 * 50e6 / 1.5).epsilon(1e-9));
  CHECK(fit_rounds({}).bytes_per_s == 0);
}

TEST_CASE("fit_rounds: a short round that ran fast (a throttle's slice, a cache) is left out beside long ones") {
  // 50 MB/s, but the 8 MB round took 0.12 s (67 MB/s).
  FittedLine l = fit_rounds({{8'000'000, 0.12}, {64'000'000, 1.28}, {128'000'000, 2.56}});
  CHECK(l.fixed_s == doctest::Approx(0).epsilon(1e-6));
  CHECK(l.bytes_per_s == doctest::Approx(50e6).epsilon(1e-6));
}

TEST_CASE("run_checkpoint_probe: every rank saves and restores, and nothing is left behind") {
  testing::TempTree dir;
  CheckpointRequest req;
  req.directory = dir.root.string();
  req.ranks = 2;
  req.max_rank_bytes = 32 << 20;  // small: the whole checkpoint is saved within the budget
  req.runtime = 20s;
  std::atomic<bool> stop{false};
  auto r = run_checkpoint_probe(req, stop);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->ranks == 2);
  REQUIRE(!r->saves.empty());
  CHECK(r->saves.back().rank_bytes == uint64_t{32} << 20);
  CHECK(r->stop_reason == StopReason::kComplete);
  CHECK(r->save.bytes_per_s > 0);
  CHECK(r->restore.bytes_per_s > 0);
  uint64_t written = 0;
  for (const CheckpointRound& s : r->saves) written += 2 * s.rank_bytes;
  CHECK(r->bytes_written == written);
  CHECK(r->bytes_read > 0);
  CHECK(std::filesystem::is_empty(dir.root));
}

TEST_CASE("run_checkpoint_probe: a stop ends it at once with its files removed") {
  testing::TempTree dir;
  CheckpointRequest req;
  req.directory = dir.root.string();
  req.runtime = 20s;
  std::atomic<bool> stop{true};
  auto r = run_checkpoint_probe(req, stop);
  REQUIRE(r.ok());
  CHECK(r->stop_reason == StopReason::kSignal);
  CHECK(r->saves.empty());
  CHECK(std::filesystem::is_empty(dir.root));
}

TEST_CASE("run_checkpoint_probe: a directory that is not there is an error naming it") {
  CheckpointRequest req;
  req.directory = "/nonexistent-iogate-dir";
  std::atomic<bool> stop{false};
  auto r = run_checkpoint_probe(req, stop);
  REQUIRE(!r.ok());
  CHECK(r.error().message.find("/nonexistent-iogate-dir") != std::string::npos);
}

TEST_CASE("process_memory_limit_bytes: a positive figure no larger than the machine's") {
  CHECK(process_memory_limit_bytes() > 0);
}
