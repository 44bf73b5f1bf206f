// The checkpoint probe's report (iogate probe --mode checkpoint): JSON in schema iogate.report/v1
// with mode "checkpoint", and a summary for a person at a terminal.
//
// JSON (every key always present, one type each; units in the key's suffix): target {path},
// storage (as detect), ranks, saves[] and restores[] (the rounds: rank_bytes, seconds: the
// slowest rank's, rank_bytes_per_s), save and restore (the line through them: fixed_seconds,
// rank_bytes_per_s, bytes_per_s of all ranks together; restore zeros where not read back),
// bytes_written, bytes_read, round_bytes_limit (the most one round wrote in all ranks: memory and
// free space), measured_ns, stop_reason ("complete": a round was the whole --size a rank;
// "settled", "runtime", "signal"), plus schema, iogate_version, time, mode.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_probe.h"
#include "device/storage_stack.h"

namespace iogate {

nlohmann::json checkpoint_probe_to_json(const CheckpointProbeResult& r, const StorageStack* storage,
                                        const std::string& time);

//   checkpoint  2 ranks on /ckpt (ext4, nvme)
//   ROUND  RANK BYTES  SAVE (SLOWEST RANK)  A RANK      ...
std::string render_checkpoint_human(const CheckpointProbeResult& r, const StorageStack* storage);

}  // namespace iogate
