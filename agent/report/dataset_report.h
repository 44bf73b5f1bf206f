// The dataset probe's report (iogate probe --mode dataset): JSON in schema iogate.report/v1 with
// mode "dataset", and a summary for a person at a terminal.
//
// JSON (every key always present, one type each; units in the key's suffix):
//   dataset   files_estimate, files_exact, files_seen, files_sampled, files_sized (of the
//             sample, stat'ed for file_size_bytes after the timed reads), bytes_estimate,
//             estimate_method, file_size_bytes {p10,p50,p90,p99,max,mean}, dirs_scanned,
//             dirs_pending, entries_read, max_dir_entries, fanout {mean_subdirs_per_dir,
//             mean_files_per_dir, depths[]}, permission_denied, permission_denied_paths[],
//             symlinks_skipped, other_skipped, vanished, scan_stop_reason, scan_ns
//   loader    the headline run (most samples/s): workers, direct, samples_per_s, bytes_per_s,
//             files_read, bytes_read, errors, elapsed_ns, cpu_ns (the worker threads' CPU time),
//             stop_reason, open_ns / first_byte_ns / file_ns {min,mean,p50,p90,p99,p99_9,max,count},
//             knee_workers, sweep[] (one entry per worker count, the same keys but sweep and
//             knee_workers)
//   metadata  the headline is a first epoch's ("cold": names listed, never looked up); measured
//             (true on network file systems), cold_samples_per_s (the headline's),
//             warm_samples_per_s (files looked up first, 0 where not measured), files_looked_up,
//             lookup_ns {...} (stat of a name not yet looked up), warm (a run, or null)
//   limit     what limits the loader (bench/feed_limit.h): resource ("iops", "bandwidth",
//             "per-file-latency", "metadata", "reader-cpu", "unknown"), why (one sentence with the
//             numbers), points {whole, halves, doubled} (each null where not measured, else
//             workers, files, requests, bytes, elapsed_ns, files_per_s, requests_per_s,
//             bytes_per_s)
//   recommendations [{id, message, evidence {number...}}]
// plus schema, iogate_version, time, mode, target {path}, storage (as detect), seed, page_cache,
// cpus, mem_total_bytes, stop_reason, warnings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dataset/dataset_probe.h"

namespace iogate {

nlohmann::json dataset_probe_to_json(const DatasetProbeResult& r);

//   dataset   20,000 files (exact)  2.1 GiB  in 40 dirs  fan-out 2.0 dirs, 500 files per dir
//   sizes     p10 32 KiB  p50 104 KiB  p90 180 KiB  p99 196 KiB  max 64 MiB
//   storage   ext4 on /dev/vda  virtio
//   loader    4 workers  2,310 samples/s  240 MiB/s  buffered
//   latency   open p50 40 µs p99 300 µs  first byte p50 … p99 …  file p50 … p99 …
//   metadata  first epoch (lookups cold) 208 samples/s  cached 456 samples/s  lookup p50 2.1 ms
//   sweep     workers  samples/s  MiB/s  gain …   (for several worker counts)
//   limit     bandwidth: reading each file in 2.0x smaller requests …
//   advice    [pack-into-shards] …
//   warning   …
std::string render_dataset_human(const DatasetProbeResult& r, bool color);

}  // namespace iogate
