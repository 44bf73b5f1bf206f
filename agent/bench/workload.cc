#include "bench/workload.h"

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
  return usage_error(fmt::format(
      "--rw: unknown workload \"{}\" (expected randread, randwrite, read, write or randrw)", text));
}

bool rw_mode_reads(RwMode m) { return m == RwMode::kRandRead || m == RwMode::kRead || m == RwMode::kRandRw; }
bool rw_mode_writes(RwMode m) { return m == RwMode::kRandWrite || m == RwMode::kWrite || m == RwMode::kRandRw; }
bool rw_mode_random(RwMode m) { return m == RwMode::kRandRead || m == RwMode::kRandWrite || m == RwMode::kRandRw; }

Status validate_workload(const Workload& w) {
  if (w.block_size < 512) return usage_error(fmt::format("--bs: must be at least 512 bytes, got {}", w.block_size));
  if (w.block_size > (uint64_t{64} << 20)) {
    return usage_error(fmt::format("--bs: at most 64m, got {}", format_size_compact(w.block_size)));
  }
  if (w.iodepth < 1 || w.iodepth > 4096) return usage_error(fmt::format("--iodepth: must be in [1, 4096], got {}", w.iodepth));
  if (w.iodepth_batch < 1 || w.iodepth_batch > w.iodepth) {
    return usage_error(fmt::format("--iodepth-batch: must be in [1, --iodepth ({})], got {}", w.iodepth, w.iodepth_batch));
  }
  if (w.numjobs < 1 || w.numjobs > 256) return usage_error(fmt::format("--numjobs: must be in [1, 256], got {}", w.numjobs));
  if (w.rwmixread < 0 || w.rwmixread > 100) {
    return usage_error(fmt::format("--rwmixread: must be in [0, 100], got {}", w.rwmixread));
  }
  if (w.runtime.count() < 100'000'000) return usage_error("--runtime: must be at least 100ms");
  if (w.ramp.count() < 0) return usage_error("--ramp: must not be negative");
  if (w.file.empty() && w.size < w.block_size * static_cast<uint64_t>(w.numjobs)) {
    return usage_error(fmt::format("--size: {} is smaller than --bs × --numjobs ({} × {})", format_size_compact(w.size),
                                   format_size_compact(w.block_size), w.numjobs));
  }
  if (!w.file.empty() && rw_mode_writes(w.rw)) {
    return usage_error(fmt::format("--file: only read workloads may use an existing file; --rw {} would write to it",
                                   rw_mode_name(w.rw)));
  }
  if (w.iodepth * static_cast<uint64_t>(w.numjobs) * w.block_size > (uint64_t{4} << 30)) {
    return usage_error("--iodepth × --numjobs × --bs: more than 4 GiB of buffers in flight");
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
