#include "probe/workload.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "base/quote.h"
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

namespace {

constexpr RwMode kRwModes[] = {RwMode::kRandRead, RwMode::kRandWrite, RwMode::kRead, RwMode::kWrite, RwMode::kRandRw};

}  // namespace

std::string_view rw_mode_choices() {
  static const std::string text = [] {
    std::string out;
    for (size_t i = 0; i < std::size(kRwModes); ++i) {
      out += i == 0 ? "" : i + 1 == std::size(kRwModes) ? " or " : ", ";
      out += rw_mode_name(kRwModes[i]);
    }
    return out;
  }();
  return text;
}

Result<RwMode> parse_rw_mode(std::string_view text, std::string_view what) {
  for (RwMode m : kRwModes) {
    if (text == rw_mode_name(m)) return m;
  }
  return usage_error(fmt::format("{}: unknown workload {} (expected {})", what, quote_value(text), rw_mode_choices()));
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
    case WorkloadField::kDirect: return "direct";
    case WorkloadField::kFile: return "file";
    case WorkloadField::kSeed: return "seed";
  }
  return "?";
}

std::string flag_spelling(WorkloadField f) {
  std::string flag = "--" + std::string(workload_field_name(f));
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string policy_spelling(WorkloadField f) { return "workload." + std::string(workload_field_name(f)); }

namespace {

using F = WorkloadField;
using S = FieldSyntax;
constexpr IntegerRange kNoRange{0, 0};

constexpr WorkloadFieldInfo kFields[] = {
    {F::kRw, S::kRwMode, kNoRange, true, "randread | randwrite | read | write | randrw"},
    {F::kRwmixread, S::kInteger, kRwmixreadRange, true, "percent reads in randrw"},
    {F::kBs, S::kSize, kNoRange, true, "block size (k/m/g suffixes, binary)"},
    {F::kIodepth, S::kInteger, kIodepthRange, true, "I/Os in flight per job"},
    {F::kIodepthBatch, S::kInteger, kIodepthRange, false,
     "I/Os per io_submit (fio's iodepth_batch_submit); more saves CPU, costs IOPS"},
    {F::kNumjobs, S::kInteger, kNumjobsRange, true, "jobs: one thread and one aio context each"},
    {F::kRuntime, S::kDuration, kNoRange, true, "measured time (s/m/ms)"},
    {F::kRamp, S::kDuration, kNoRange, true, "warm-up excluded from results (fio's ramp_time)"},
    {F::kSize, S::kSize, kNoRange, true, "size of the test file iogate creates"},
    {F::kDirect, S::kBool, kNoRange, true, "O_DIRECT: 1 or 0 (true or false; 0 for buffered)"},
    {F::kFile, S::kPath, kNoRange, false, "read this existing file instead of a test file (read workloads only)"},
    {F::kSeed, S::kInteger, kSeedRange, false, "seed for random offsets (default: fresh each run, printed)"},
};

const WorkloadFieldInfo& field_info(WorkloadField f) {
  for (const WorkloadFieldInfo& info : kFields) {
    if (info.field == f) return info;
  }
  return kFields[0];  // unreachable: every field has a row (workload_test.cc)
}

}  // namespace

std::span<const WorkloadFieldInfo> workload_fields() { return kFields; }

std::optional<std::string> workload_field_text(const Workload& w, WorkloadField f) {
  switch (f) {
    case F::kRw: return std::string(rw_mode_name(w.rw));
    case F::kRwmixread: return fmt::format("{}", w.rwmixread);
    case F::kBs: return format_size_compact(w.block_size);
    case F::kIodepth: return fmt::format("{}", w.iodepth);
    case F::kIodepthBatch: return fmt::format("{}", w.iodepth_batch);
    case F::kNumjobs: return fmt::format("{}", w.numjobs);
    case F::kRuntime: return format_duration_compact(w.runtime.count());
    case F::kRamp: return format_duration_compact(w.ramp.count());
    case F::kSize: return format_size_compact(w.size);
    case F::kDirect: return std::string(w.direct ? "1" : "0");
    case F::kFile:
      if (w.file.empty()) return std::nullopt;
      return w.file;
    case F::kSeed:
      if (!w.seed) return std::nullopt;
      return fmt::format("{}", *w.seed);
  }
  return std::nullopt;
}

Status set_workload_field(Workload& w, WorkloadField f, std::string_view text, FieldSpelling spell) {
  const WorkloadFieldInfo& info = field_info(f);
  const std::string what = spell(f);
  switch (info.syntax) {
    case S::kRwMode: {
      auto rw = parse_rw_mode(text, what);
      if (!rw.ok()) return rw.error();
      w.rw = *rw;
      return ok_status();
    }
    case S::kInteger: {
      auto x = parse_integer(text, what, info.range.min, info.range.max);
      if (!x.ok()) return x.error();
      if (f == F::kSeed) {
        w.seed = static_cast<uint64_t>(*x);
        return ok_status();
      }
      int& field = f == F::kRwmixread      ? w.rwmixread
                   : f == F::kIodepth      ? w.iodepth
                   : f == F::kIodepthBatch ? w.iodepth_batch
                                           : w.numjobs;
      field = static_cast<int>(*x);
      return ok_status();
    }
    case S::kSize: {
      auto x = parse_size(text, what);
      if (!x.ok()) return x.error();
      (f == F::kBs ? w.block_size : w.size) = *x;
      return ok_status();
    }
    case S::kDuration: {
      auto x = parse_duration(text, what);
      if (!x.ok()) return x.error();
      (f == F::kRuntime ? w.runtime : w.ramp) = *x;
      return ok_status();
    }
    case S::kBool: {
      auto x = parse_bool(text, what);
      if (!x.ok()) return x.error();
      w.direct = *x;
      return ok_status();
    }
    case S::kPath: w.file = std::string(text); return ok_status();
  }
  return ok_status();
}

Status validate_workload(const Workload& w, FieldSpelling spell) {
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
