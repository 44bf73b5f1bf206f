#include "dataset/dataset_probe.h"

#include <sched.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/paths.h"
#include "base/rng.h"
#include "base/trim.h"
#include "device/kernel_file.h"

namespace iogate {
namespace {

uint64_t fresh_seed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = monotonic_ns() ^ (uint64_t(getpid()) << 32);
  return seed & ((uint64_t{1} << 53) - 1);  // travels in JSON, read as a double by jq
}

bool any_rotational(const std::vector<StackNode>& nodes) {
  for (const StackNode& n : nodes) {
    // The class, not queue/rotational: virtio and loop devices say 1 over flash (device_class.h).
    if (n.children.empty() ? n.device_class == DeviceClass::kHdd : any_rotational(n.children)) {
      return true;
    }
  }
  return false;
}

std::string no_files_message(const DatasetScan& s) {
  if (s.entries_read == 0 && s.permission_denied == 0)
    return fmt::format("{}: empty directory: no files to read", s.root);
  std::string m =
      fmt::format("{}: no regular files to read ({} directories, {} entries", s.root, s.dirs_read, s.entries_read);
  if (s.symlinks_skipped) m += fmt::format(", {} symbolic links not followed", s.symlinks_skipped);
  m += ")";
  if (s.permission_denied) {
    m += fmt::format("; {} directories could not be read (permission denied), first: {}", s.permission_denied,
                     s.permission_denied_paths.empty() ? "?" : s.permission_denied_paths[0]);
  }
  return m;
}

}  // namespace

uint64_t read_mem_total_bytes(const std::string& proc_root) {
  auto text = read_kernel_file(proc_root + "/meminfo");
  if (!text.ok()) return 0;
  for (std::string_view line : split_kernel_lines(*text)) {
    if (!line.starts_with("MemTotal:")) continue;
    line = trim_space(line.substr(9));
    uint64_t kib = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), kib);
    return ec == std::errc() ? kib * 1024 : 0;
  }
  return 0;
}

bool has_rotational_leaf(const StorageStack& s) { return any_rotational(s.stack); }

Result<DatasetProbeResult> run_dataset_probe(const DatasetRequest& req, const std::atomic<bool>& stop,
                                             const DatasetProgressCallback& on_progress) {
  DatasetProbeResult r;
  r.path = req.path;
  r.started_at = rfc3339_utc_now();
  r.seed = req.seed.value_or(fresh_seed());
  const std::string proc = proc_under(req.root);

  if (on_progress) on_progress({"scan", 0});
  ScanBudget budget = req.scan;
  budget.seed = mix_seed(r.seed, 0);
  auto scan = scan_dataset(req.path, budget, stop);
  if (!scan.ok()) return scan.error();
  r.scan = std::move(*scan);
  if (r.scan.sample.empty() && r.scan.stop_reason != StopReason::kSignal) return usage_error(no_files_message(r.scan));

  auto storage =
      req.storage ? Result<StorageStack>(*req.storage) : detect_storage_stack(req.path, DetectOptions{req.root});
  if (storage.ok()) {
    r.storage = std::move(*storage);
  } else {
    r.storage.path = req.path;
    r.storage.reason = storage.error().message;
  }
  r.page_cache = r.storage.device_class == DeviceClass::kRam;
  if (r.page_cache) {
    r.warnings.push_back(fmt::format("{} is on {}: memory speed, not storage", req.path, r.storage.mount.fs_type));
  }
  if (r.scan.permission_denied) {
    r.warnings.push_back(
        fmt::format("{} directories could not be read (permission denied) and are not in the "
                    "counts or the sample; first: {}",
                    r.scan.permission_denied, r.scan.permission_denied_paths.front()));
  }
  if (!r.scan.complete() && r.scan.stop_reason != StopReason::kSignal) {
    r.warnings.push_back(
        fmt::format("the scan stopped at its {} budget after {} entries: the file count is {}",
                    stop_reason_name(r.scan.stop_reason), r.scan.entries_read,
                    r.scan.depths.empty() || r.scan.depths[0].dirs_read == 0 ? "a lower bound" : "estimated"));
  }

  // Shuffled, as a DataLoader with shuffle=True visits samples: neighbours on disk are not read
  // one after the other.
  std::vector<SampledFile> files = r.scan.sample;
  FastRng rng(mix_seed(r.seed, 1));
  for (size_t i = files.size(); i > 1; --i) std::swap(files[i - 1], files[rng.below(i)]);
  if (req.shards > 1) {
    std::vector<SampledFile> ours;
    for (size_t i = req.shard; i < files.size(); i += req.shards) ours.push_back(std::move(files[i]));
    files = std::move(ours);
  }

  std::vector<int> counts = req.worker_counts;
  if (counts.empty()) counts.push_back(default_loader_workers());
  r.sweep = run_loader_sweep(files, counts, req.loader, stop, [&](int w) {
    if (on_progress) on_progress({"load", w});
  });
  for (size_t i = 0; i < r.sweep.size(); ++i) {
    if (r.sweep[i].samples_per_s() > r.sweep[r.headline].samples_per_s()) r.headline = i;
  }
  r.knee_workers = scaling_knee(r.sweep);
  cpu_set_t set;
  r.cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  r.mem_total_bytes = read_mem_total_bytes(proc);
  if (const LoaderRun* l = r.loader()) {
    for (const LoaderRun& run : r.sweep) {
      for (const std::string& n : run.notes) {
        if (std::find(r.warnings.begin(), r.warnings.end(), n) == r.warnings.end()) r.warnings.push_back(n);
      }
      if (run.errors) {
        r.warnings.push_back(
            fmt::format("{} workers: {} files could not be read; first: {}", run.workers, run.errors, run.first_error));
      }
    }
    // Past every file a loader run took, so the later reads touch files no run left in a cache.
    size_t cursor = 0;
    for (const LoaderRun& run : r.sweep) cursor = std::max(cursor, run.first_file + run.files_taken);
    if (r.storage.device_class == DeviceClass::kNetworkFs && !stop.load()) {
      if (on_progress) on_progress({"metadata", l->workers});
      LoaderOptions o = req.loader;
      o.workers = l->workers;
      r.metadata = measure_warm_metadata_epoch(files, cursor, l->samples_per_s(), o, stop);
      cursor += r.metadata.files_looked_up;
    }
    // Files in memory (tmpfs, ramfs) have no storage to be limited by; a loop device over a file
    // in memory (class ram too) has a block layer, which may cap it: it is measured.
    const bool in_memory = r.storage.mount.fs_type == "tmpfs" || r.storage.mount.fs_type == "ramfs";
    if (!in_memory && !stop.load()) {
      if (on_progress) on_progress({"limit", l->workers});
      r.limit_points = measure_feed_points(files, cursor, l->workers, req.limit, stop);
      for (const std::string& n : r.limit_points.notes) r.warnings.push_back(n);
    }
    FeedFacts ff;
    ff.workers = l->workers;
    ff.samples_per_s = l->samples_per_s();
    ff.bytes_per_s = l->bytes_per_s();
    ff.open_p50_ns = l->open_ns.percentile(50);
    ff.file_p50_ns = l->file_ns.percentile(50);
    ff.mean_file_ns = l->file_ns.mean();
    ff.cpu_ns = l->cpu_ns;
    ff.elapsed_ns = l->elapsed_ns;
    ff.cpus = r.cpus;
    ff.page_cache = in_memory;
    ff.whole = r.limit_points.whole;
    ff.halves = r.limit_points.halves;
    ff.doubled = r.limit_points.doubled;
    r.limit = classify_feed_limit(ff);

    // Sizes last: the lookups behind them would have warmed the files the reads above open cold.
    size_sample(r.scan, req.scan.sized, l->workers, req.scan.time, stop);

    DatasetFacts f;
    f.files_estimate = r.scan.files_estimate;
    f.bytes_estimate = r.scan.bytes_estimate;
    f.median_file_bytes = r.scan.sizes.p50;
    f.workers = l->workers;
    f.samples_per_s = l->samples_per_s();
    f.mean_file_ns = l->file_ns.mean();
    f.open_p50_ns = l->open_ns.percentile(50);
    f.file_p50_ns = l->file_ns.percentile(50);
    f.knee_workers = r.sweep.size() > 1 ? r.knee_workers : 0;
    if (r.sweep.size() > 1) {
      for (const LoaderRun& run : r.sweep) f.sweep.emplace_back(run.workers, run.samples_per_s());
    }
    f.cpus = r.cpus;
    f.mem_total_bytes = r.mem_total_bytes;
    f.device_class = r.storage.device_class;
    f.rotational_leaf = has_rotational_leaf(r.storage);
    f.target_samples_per_s = req.target_samples_per_s;
    f.limit = r.limit;
    if (r.metadata.measured) {
      f.warm_metadata_samples_per_s = r.metadata.warm.samples_per_s();
      f.lookup_p50_ns = r.metadata.lookup_ns.percentile(50);
    }
    r.recommendations = recommend_for_dataset(f);
  }
  if (!r.loader()) size_sample(r.scan, req.scan.sized, 1, req.scan.time, stop);
  r.stop_reason = stop.load() ? StopReason::kSignal : StopReason::kComplete;
  return r;
}

}  // namespace iogate
