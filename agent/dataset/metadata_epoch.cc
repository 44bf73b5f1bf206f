#include "dataset/metadata_epoch.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/clock.h"

namespace iogate {

MetadataEpoch measure_warm_metadata_epoch(const std::vector<SampledFile>& files, size_t cursor,
                                          double cold_samples_per_s, const LoaderOptions& options,
                                          const std::atomic<bool>& stop) {
  MetadataEpoch out;
  if (cursor >= files.size() || stop.load()) return out;
  LoaderOptions o = options;
  o.runtime = std::min<std::chrono::nanoseconds>(o.runtime, kWarmEpochRuntime);
  o.early_stop.enabled = false;  // a fixed, short run: its rate is compared with the headline's
  const int workers = std::max(1, o.workers);
  const double seconds = std::chrono::duration<double>(o.runtime).count();
  const size_t want = static_cast<size_t>(std::ceil(std::max(cold_samples_per_s, 1.0) * 3 * seconds)) + size_t(workers);
  const size_t n = std::min(want, files.size() - cursor);

  // The lookups, as many at once as the loader will read: a round trip each where the file system
  // is remote.
  std::atomic<size_t> next{0};
  std::vector<LatencyHistogram> lookups(static_cast<size_t>(workers));
  {
    std::vector<std::jthread> threads;
    for (LatencyHistogram& h : lookups) {
      threads.emplace_back([&, hist = &h] {
        for (size_t i; !stop.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
          struct stat st;
          uint64_t t0 = monotonic_ns();
          if (::stat(files[cursor + i].path.c_str(), &st) == 0) hist->record(monotonic_ns() - t0);
        }
      });
    }
  }
  for (const LatencyHistogram& h : lookups) out.lookup_ns.merge(h);
  out.files_looked_up = std::min(next.load(), n);
  if (stop.load() || out.files_looked_up == 0) return out;
  out.warm = run_loader(files, cursor, out.files_looked_up, o, stop);
  out.measured = !stop.load() && out.warm.files_read > 0;
  return out;
}

}  // namespace iogate
