#include "bench/workload.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {

std::string_view rw_mode_name(RwMode mode) {
  switch (mode) {
    case RwMode::kRandRead: return "randread";
    case RwMode::kRandWrite: return "randwrite";
    case RwMode::kRead: return "read";
    case RwMode::kWrite: return "write";
    case RwMode::kRandRw: return "randrw";
  }
  return "?";
}

Result<RwMode> parse_rw_mode(std::string_view text) {
  for (RwMode m : {RwMode::kRandRead, RwMode::kRandWrite, RwMode::kRead, RwMode::kWrite, RwMode::kRandRw}) {
    if (text == rw_mode_name(m)) return m;
  }
  return usage_error(
      fmt::format("--rw: unknown workload \"{}\" (expected randread, randwrite, read, write or randrw)", text));
}

bool rw_mode_reads(RwMode m) { return m == RwMode::kRandRead || m == RwMode::kRead || m == RwMode::kRandRw; }
bool rw_mode_writes(RwMode m) { return m == RwMode::kRandWrite || m == RwMode::kWrite || m == RwMode::kRandRw; }
bool rw_mode_random(RwMode m) { return m == RwMode::kRandRead || m == RwMode::kRandWrite || m == RwMode::kRandRw; }

std::string_view workload_field_name(WorkloadField f) {
  switch (f) {
    case WorkloadField::kRw: return "rw";
    case WorkloadField::kRwmixread: return "rwmixread";
    case WorkloadField::kBs: return "bs";
    case WorkloadField::kIodepth: return "iodepth";
    case WorkloadField::kIodepthBatch: return "iodepth_batch";
    case WorkloadField::kNumjobs: return "numjobs";
    case WorkloadField::kRuntime: return "runtime";
    case WorkloadField::kRamp: return "ramp";
    case WorkloadField::kSize: return "size";
    case WorkloadField::kFile: return "file";
  }
  return "?";
}

std::string flag_spelling(WorkloadField f) {
  std::string flag = "--" + std::string(workload_field_name(f));
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string policy_spelling(WorkloadField f) { return "workload." + std::string(workload_field_name(f)); }

Status validate_workload(const Workload& w, FieldSpelling spell) {
  using F = WorkloadField;
  auto error = [&](F f, std::string message) { return usage_error(spell(f) + ": " + message); };
  if (w.block_size < kMinBlockSize) {
    return error(F::kBs, fmt::format("must be at least {} bytes, got {}", kMinBlockSize, w.block_size));
  }
  if (w.block_size > kMaxBlockSize) {
    return error(F::kBs, fmt::format("at most {}, got {}", format_size_compact(kMaxBlockSize),
                                     format_size_compact(w.block_size)));
  }
  if (w.iodepth < kIodepthRange.min || w.iodepth > kIodepthRange.max) {
    return error(F::kIodepth,
                 fmt::format("must be in [{}, {}], got {}", kIodepthRange.min, kIodepthRange.max, w.iodepth));
  }
  if (w.iodepth_batch < 1 || w.iodepth_batch > w.iodepth) {
    return error(F::kIodepthBatch,
                 fmt::format("must be in [1, {} ({})], got {}", spell(F::kIodepth), w.iodepth, w.iodepth_batch));
  }
  if (w.numjobs < kNumjobsRange.min || w.numjobs > kNumjobsRange.max) {
    return error(F::kNumjobs,
                 fmt::format("must be in [{}, {}], got {}", kNumjobsRange.min, kNumjobsRange.max, w.numjobs));
  }
  if (w.rwmixread < kRwmixreadRange.min || w.rwmixread > kRwmixreadRange.max) {
    return error(F::kRwmixread,
                 fmt::format("must be in [{}, {}], got {}", kRwmixreadRange.min, kRwmixreadRange.max, w.rwmixread));
  }
  if (w.runtime < kMinRuntime) {
    return error(F::kRuntime, fmt::format("must be at least {}ms",
                                          std::chrono::duration_cast<std::chrono::milliseconds>(kMinRuntime).count()));
  }
  if (w.ramp.count() < 0) return error(F::kRamp, "must not be negative");
  if (w.file.empty() && w.size < w.block_size * static_cast<uint64_t>(w.numjobs)) {
    return error(F::kSize,
                 fmt::format("{} is smaller than {} × {} ({} × {})", format_size_compact(w.size), spell(F::kBs),
                             spell(F::kNumjobs), format_size_compact(w.block_size), w.numjobs));
  }
  if (!w.file.empty() && rw_mode_writes(w.rw)) {
    return error(F::kFile, fmt::format("only read workloads may use an existing file; {} {} would write to it",
                                       spell(F::kRw), rw_mode_name(w.rw)));
  }
  if (w.iodepth * static_cast<uint64_t>(w.numjobs) * w.block_size > kMaxBytesInFlight) {
    return usage_error(fmt::format("{} × {} × {}: more than {} GiB of buffers in flight", spell(F::kIodepth),
                                   spell(F::kNumjobs), spell(F::kBs), kMaxBytesInFlight >> 30));
  }
  return ok_status();
}

Status validate_alignment(const Workload& w, uint32_t align, std::string_view path) {
  if (!w.direct || align <= 1) return ok_status();
  if (w.block_size % align != 0) {
    return usage_error(fmt::format(
        "--bs: {} bytes is not a multiple of {}'s direct I/O alignment ({} bytes); use a multiple of {} or --direct=0",
        w.block_size, path, align, align));
  }
  return ok_status();
}

}  // namespace iogate
