// What a probe does: the fio-like description of one benchmark run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace iogate {

enum class RwMode { kRandRead, kRandWrite, kRead, kWrite, kRandRw };

std::string_view rw_mode_name(RwMode mode);  // fio's names: "randread", ...
Result<RwMode> parse_rw_mode(std::string_view text);
bool rw_mode_reads(RwMode mode);
bool rw_mode_writes(RwMode mode);
bool rw_mode_random(RwMode mode);

struct Workload {
  RwMode rw = RwMode::kRandRead;
  int rwmixread = 50;  // percent of reads in randrw
  uint64_t block_size = 4096;
  int iodepth = 32;
  // Refills gathered per io_submit (fio's iodepth_batch_submit). 1 replaces each completion at
  // once, as fio's default does; more saves syscalls and costs IOPS on a fast device.
  int iodepth_batch = 1;
  int numjobs = 1;
  std::chrono::nanoseconds runtime = std::chrono::seconds(10);
  std::chrono::nanoseconds ramp = std::chrono::seconds(1);
  uint64_t size = uint64_t{1} << 30;  // of the test file iogate creates
  bool direct = true;
  std::string file;              // an existing file to read instead of a test file
  std::optional<uint64_t> seed;  // fresh per run unless given
  bool keep_test_file = false;   // leave the test file for the next run to reuse
};

// Checks what can be checked without touching the target; errors name the flag.
Status validate_workload(const Workload& w);

// Checks the block size against the target's O_DIRECT alignment once it is known.
Status validate_alignment(const Workload& w, uint32_t dio_offset_align, std::string_view path);

}  // namespace iogate
