// What a probe does: the fio-like description of one benchmark run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"

namespace iogate {

enum class RwMode { kRandRead, kRandWrite, kRead, kWrite, kRandRw };

std::string_view rw_mode_name(RwMode mode);  // fio's names: "randread", ...
Result<RwMode> parse_rw_mode(std::string_view text, std::string_view what = "--rw");
std::string_view rw_mode_choices();  // "randread, randwrite, read, write or randrw", for messages
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

// The limits of a workload, written once: the field table below, validate_workload and the
// chart's values.schema.json (tests/unit/probe/workload_test.cc) use these. Defaults are
// Workload{}'s (a policy's size is smaller: default_policy_workload).
struct IntegerRange {
  int64_t min;
  int64_t max;
};
inline constexpr IntegerRange kRwmixreadRange{0, 100};
inline constexpr IntegerRange kIodepthRange{1, 4096};
inline constexpr IntegerRange kNumjobsRange{1, 256};
inline constexpr IntegerRange kSeedRange{0, INT64_MAX};
inline constexpr uint64_t kMinBlockSize = 512;
inline constexpr uint64_t kMaxBlockSize = uint64_t{64} << 20;
inline constexpr std::chrono::nanoseconds kMinRuntime = std::chrono::milliseconds(100);
inline constexpr uint64_t kMaxBytesInFlight = uint64_t{4} << 30;  // iodepth × numjobs × bs of buffers

// The fields a user sets, each spelled by the caller: "--iodepth" on the command line
// (flag_spelling), "workload.iodepth" in a policy (policy_spelling).
enum class WorkloadField {
  kRw,
  kRwmixread,
  kBs,
  kIodepth,
  kIodepthBatch,
  kNumjobs,
  kRuntime,
  kRamp,
  kSize,
  kDirect,
  kFile,
  kSeed
};
std::string_view workload_field_name(WorkloadField f);  // fio's option name: "bs", "iodepth_batch", ...
using FieldSpelling = std::string (*)(WorkloadField);
std::string flag_spelling(WorkloadField f);    // "--bs", "--iodepth-batch"
std::string policy_spelling(WorkloadField f);  // "workload.bs", "workload.iodepth_batch"

// How a field's text is read (base/units.h): the same words on the command line and in a policy.
enum class FieldSyntax { kRwMode, kInteger, kSize, kDuration, kBool, kPath };

// One row per field: the probe's flags, a policy's workload keys and their parsing come from here.
struct WorkloadFieldInfo {
  WorkloadField field;
  FieldSyntax syntax;
  IntegerRange range;     // kInteger: what set_workload_field accepts; the rest is validate_workload's
  bool policy_key;        // a policy's workload: may set it (the others are the command line's only)
  std::string_view help;  // the flag's help, fio's meaning where fio has the option
};

// Every field, in the order `iogate probe --help` lists them and errors are found in.
std::span<const WorkloadFieldInfo> workload_fields();

// The field's value as it is written ("4k", "10s", "randread", "1"); nullopt where unset (file, seed).
std::optional<std::string> workload_field_text(const Workload& w, WorkloadField f);

// Reads `text` into one field by its syntax and range; an error names the field as `spell` writes
// it. Checks across fields are validate_workload's.
Status set_workload_field(Workload& w, WorkloadField f, std::string_view text, FieldSpelling spell = flag_spelling);

// Checks what can be checked without touching the target; each message starts with the field
// that is wrong, as `spell` writes it. run_probe calls it, the command line's only check; a policy
// calls it once more when it is loaded, so that `policy check` and the webhook refuse a bad
// workload before any probe, in the policy's spelling.
Status validate_workload(const Workload& w, FieldSpelling spell = flag_spelling);

// Checks the block size against the target's O_DIRECT alignment once it is known.
Status validate_alignment(const Workload& w, uint32_t dio_offset_align, std::string_view path);

}  // namespace iogate
