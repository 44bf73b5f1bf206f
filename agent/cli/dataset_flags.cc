#include "cli/dataset_flags.h"

#include "cli/command_line.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/split_list.h"
#include "base/units.h"

namespace iogate {
namespace po = boost::program_options;

po::options_description dataset_flags() {
  po::options_description d("dataset mode (--mode dataset: samples/s of a tree of files, read-only)");
  d.add_options()("mode", po::value<std::string>()->default_value("io"),
                  "io (block I/O, the default) | dataset | checkpoint")(
      "workers", po::value<std::string>(), "loader threads, or a sweep list 1,2,4,8,16 (default 70% of the CPUs)")(
      "scan-time", po::value<std::string>()->default_value("10s"), "time budget of the directory walk")(
      "scan-entries", po::value<std::string>()->default_value("2000000"), "entry budget of the directory walk")(
      "scan-files", po::value<std::string>()->default_value(std::to_string(ScanBudget{}.files)),
      "files listed before the walk stops (0: no limit); beyond it the count is estimated")(
      "sample", po::value<std::string>()->default_value("20000"), "files sampled (uniformly) for sizes and the loader")(
      "target-samples-per-s", po::value<std::string>(), "the rate to feed the GPUs: advice on the workers it needs")(
      "min-samples-per-s", po::value<std::string>(),
      "with --early-stop: also stop the loader once samples/s are clearly above or below this")(
      "no-limit", po::bool_switch(), "skip the ~1.2 s measurement that names the limit (IOPS, bandwidth, ...)")(
      "gpus", po::value<std::string>(), "with --workload: the accelerators to predict the AU for (default 1)");
  add_workload_flags(d);
  return d;
}

Result<std::vector<int>> parse_worker_counts(std::string_view text, std::string_view what) {
  std::vector<int> counts;
  for (std::string_view piece : split_list(text)) {
    auto n = parse_integer(piece, what, 1, 1024);
    if (!n.ok()) return n.error();
    if (std::find(counts.begin(), counts.end(), int(*n)) != counts.end()) {
      return usage_error(fmt::format("{}: {} is listed twice", what, *n));
    }
    counts.push_back(static_cast<int>(*n));
  }
  return counts;
}

Result<DatasetRequest> dataset_request_from_flags(const po::variables_map& vm, const std::string& path,
                                                  const std::string& root) {
  for (std::string_view flag : kIoOnlyProbeFlags) {
    std::string k(flag);
    if (vm.count(k) && !vm[k].defaulted()) {
      return usage_error(
          fmt::format("--{}: not used by --mode dataset (it reads whole files; see --workers, --sample)", k));
    }
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  DatasetRequest r;
  r.path = path;
  r.root = root;
  auto scan_time = parse_duration(str("scan-time"), "--scan-time");
  if (!scan_time.ok()) return scan_time.error();
  if (scan_time->count() <= 0) return usage_error("--scan-time: must be more than 0");
  r.scan.time = *scan_time;
  auto entries = parse_integer(str("scan-entries"), "--scan-entries", 1, int64_t{1} << 40);
  if (!entries.ok()) return entries.error();
  r.scan.entries = static_cast<uint64_t>(*entries);
  auto files = parse_integer(str("scan-files"), "--scan-files", 0, int64_t{1} << 40);
  if (!files.ok()) return files.error();
  r.scan.files = static_cast<uint64_t>(*files);
  auto sample = parse_integer(str("sample"), "--sample", 1, 10'000'000);
  if (!sample.ok()) return sample.error();
  r.scan.sample_size = static_cast<size_t>(*sample);
  if (vm.count("workers")) {
    auto counts = parse_worker_counts(str("workers"), "--workers");
    if (!counts.ok()) return counts.error();
    r.worker_counts = std::move(*counts);
  } else {
    r.worker_counts = {default_loader_workers()};
  }
  auto runtime = parse_duration(str("runtime"), "--runtime");
  if (!runtime.ok()) return runtime.error();
  if (runtime->count() <= 0) return usage_error("--runtime: must be more than 0");
  r.loader.runtime = *runtime;
  // Buffered with DONTNEED unless asked: O_DIRECT is what a DataLoader does not do, and many
  // network file systems refuse or emulate it.
  if (vm.count("direct") && !vm["direct"].defaulted()) {
    auto direct = parse_bool(str("direct"), "--direct");
    if (!direct.ok()) return direct.error();
    r.loader.direct = *direct;
  }
  if (vm.count("seed")) {
    auto seed = parse_integer(str("seed"), "--seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.error();
    r.seed = static_cast<uint64_t>(*seed);
  }
  r.loader.early_stop.enabled = vm["early-stop"].as<bool>();
  auto tolerance = parse_fraction(str("tolerance"), "--tolerance");
  if (!tolerance.ok()) return tolerance.error();
  r.loader.early_stop.tolerance = *tolerance;
  if (vm.count("min-samples-per-s")) {
    if (!r.loader.early_stop.enabled) {
      return usage_error("--min-samples-per-s: only with --early-stop (it is a reason to stop early)");
    }
    auto floor = parse_integer(str("min-samples-per-s"), "--min-samples-per-s", 1, int64_t{1} << 40);
    if (!floor.ok()) return floor.error();
    r.loader.early_stop.threshold_iops = static_cast<double>(*floor);
  }
  if (Status s = validate_early_stop(r.loader.early_stop); !s.ok()) return s.error();
  r.limit.enabled = !vm["no-limit"].as<bool>();
  if (vm.count("target-samples-per-s")) {
    auto target = parse_integer(str("target-samples-per-s"), "--target-samples-per-s", 1, int64_t{1} << 40);
    if (!target.ok()) return target.error();
    r.target_samples_per_s = static_cast<double>(*target);
  }
  return r;
}

}  // namespace iogate
