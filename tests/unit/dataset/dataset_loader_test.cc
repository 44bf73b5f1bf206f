#include <doctest/doctest.h>

#include <atomic>

#include <fmt/format.h>

#include "dataset/dataset_loader.h"
#include "temp_tree.h"

using namespace iogate;
using iogate::testing::TempTree;

namespace {
const std::atomic<bool> kNoStop{false};

std::vector<SampledFile> make_files(const TempTree& t, int n, size_t size) {
  std::vector<SampledFile> files;
  for (int i = 0; i < n; ++i) files.push_back({t.write(fmt::format("f{}", i), std::string(size, 'q')), size});
  return files;
}

LoaderRun run_with(int workers, uint64_t files_read, uint64_t elapsed_ns) {
  LoaderRun r;
  r.workers = workers;
  r.files_read = files_read;
  r.elapsed_ns = elapsed_ns;
  return r;
}
}  // namespace

TEST_CASE("the loader reads every file once, whole, and times each step") {
  TempTree t;
  auto files = make_files(t, 40, 3000);
  LoaderOptions o;
  o.workers = 3;
  LoaderRun r = run_loader(files, 0, files.size(), o, kNoStop);
  CHECK(r.files_read == 40);
  CHECK(r.bytes_read == 40 * 3000);
  CHECK(r.errors == 0);
  CHECK(r.stop_reason == StopReason::kFiles);
  CHECK(r.open_ns.count() == 40);
  CHECK(r.file_ns.count() == 40);
  CHECK(r.open_ns.percentile(50) <= r.first_byte_ns.percentile(50));
  CHECK(r.first_byte_ns.percentile(50) <= r.file_ns.percentile(50));
  CHECK(r.samples_per_s() > 0);
}

TEST_CASE("files larger than a chunk are read in chunks to the end") {
  TempTree t;
  auto files = make_files(t, 2, 3 * 4096 + 17);
  LoaderOptions o;
  o.chunk_bytes = 4096;
  LoaderRun r = run_loader(files, 0, 2, o, kNoStop);
  CHECK(r.bytes_read == 2 * (3 * 4096 + 17));
}

TEST_CASE("a vanished file is an error, counted, with its path") {
  TempTree t;
  auto files = make_files(t, 3, 10);
  files.push_back({t.path("gone"), 10});
  LoaderRun r = run_loader(files, 0, files.size(), LoaderOptions{}, kNoStop);
  CHECK(r.files_read == 3);
  CHECK(r.errors == 1);
  CHECK(r.first_error.find("gone") != std::string::npos);
}

TEST_CASE("O_DIRECT reads whole files, or falls back with a note") {
  TempTree t;
  auto files = make_files(t, 4, 5000);
  LoaderOptions o;
  o.direct = true;
  LoaderRun r = run_loader(files, 0, files.size(), o, kNoStop);
  CHECK(r.files_read == 4);
  CHECK(r.bytes_read == 4 * 5000);
  if (!r.direct) CHECK(r.notes.size() == 1);
}

TEST_CASE("a sweep gives each worker count its own files") {
  TempTree t;
  auto files = make_files(t, 30, 100);
  auto sweep = run_loader_sweep(files, {1, 2, 4}, LoaderOptions{}, kNoStop);
  REQUIRE(sweep.size() == 3);
  CHECK(sweep[0].first_file == 0);
  CHECK(sweep[1].first_file == 10);
  CHECK(sweep[2].first_file == 20);
  for (const LoaderRun& r : sweep) {
    CHECK(r.files_read == 10);
    CHECK(r.notes.empty());
  }
}

TEST_CASE("a stop request ends a run early") {
  TempTree t;
  auto files = make_files(t, 20, 100);
  std::atomic<bool> stop{true};
  LoaderRun r = run_loader(files, 0, files.size(), LoaderOptions{}, stop);
  CHECK(r.files_read == 0);
  CHECK(r.stop_reason == StopReason::kSignal);
}

TEST_CASE("the scaling knee is the fewest workers within 10% of the best") {
  auto sweep_of = [](std::vector<std::pair<int, uint64_t>> points) {
    std::vector<LoaderRun> sweep;
    for (auto [workers, files] : points) sweep.push_back(run_with(workers, files, 1'000'000'000));
    return sweep;
  };
  // A plateau: 8 and 16 add under 10% over 4.
  CHECK(scaling_knee(sweep_of({{1, 1000}, {2, 1900}, {4, 3000}, {8, 3200}, {16, 3250}})) == 4);
  // A pause is not the end: 8 gains 6.7% over 4, but 16 reads 22% more than 8.
  CHECK(scaling_knee(sweep_of({{1, 1000}, {2, 1900}, {4, 3000}, {8, 3200}, {16, 3900}})) == 16);
  // A noisy dip at 2 workers does not hide the gain at 4.
  CHECK(scaling_knee(sweep_of({{1, 1800}, {2, 1700}, {4, 5400}})) == 4);
  // Nothing gains: the fewest workers.
  CHECK(scaling_knee(sweep_of({{1, 1000}, {2, 1050}, {4, 990}})) == 1);
  CHECK(scaling_knee({}) == 0);
  CHECK(scaling_knee({run_with(1, 10, 1'000'000'000)}) == 1);
  CHECK(default_loader_workers() >= 1);
}
