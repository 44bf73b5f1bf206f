#include "measure/measurement_from.h"

#include "measure/policy_probe.h"

namespace iogate {
namespace {

double per_second(uint64_t amount, uint64_t ns) {
  return ns ? static_cast<double>(amount) / (static_cast<double>(ns) / 1e9) : 0.0;
}

}  // namespace

Measurement measurement_from_probe(const ProbeResult& r) {
  Measurement m;
  JobResult all = r.aggregate();
  uint64_t ns = all.runtime_ns ? all.runtime_ns : r.measured_ns;
  m.iops = per_second(all.read.total_ios + all.write.total_ios, ns);
  m.bandwidth_bytes_per_s = per_second(all.read.io_bytes + all.write.io_bytes, ns);
  double read_p99 = all.read.clat.count() ? double(all.read.clat.percentile(99)) : 0;
  double write_p99 = all.write.clat.count() ? double(all.write.clat.percentile(99)) : 0;
  if (r.workload.rw == RwMode::kRandRw) m.p99_latency_ns = std::max(read_p99, write_p99);
  else m.p99_latency_ns = rw_mode_writes(r.workload.rw) ? write_p99 : read_p99;
  m.measured_s = double(ns) / 1e9;
  m.device_class = r.storage.device_class;
  m.leaf_classes = leaf_classes(r.storage.stack);
  m.path = r.target.path;
  m.fs_type = r.target.fs_type;
  m.rw = r.workload.rw;
  m.block_size = r.workload.block_size;
  m.page_cache = r.target.page_cache;
  m.direct = r.direct;
  m.read_only = r.target.read_only;
  m.wrote_test_file = r.target.test_file_created || r.target.test_file_reused;
  m.read_block_device = r.target.fs_type == "block device";
  m.read_existing_files = !m.wrote_test_file && !r.target.files.empty();
  for (const TargetFile& f : r.target.files) {
    m.files_bytes += f.size_bytes;
    m.readable_bytes += f.readable_bytes;
  }
  m.stop_reason = r.stop_reason;
  // Every probe reports the interval of its mean (one that is not trusted to stop a run is still
  // the best estimate of the error there is, and the caveats say when it is wide).
  const ConfidenceInterval& ci = r.convergence.ci;
  if (ci.batches > 0 && ci.mean > 0) {
    m.ci_half_width_relative = ci.relative_half_width;
    m.ci_confidence = ci.confidence;
  }
  return m;
}

Measurement measurement_from_synthetic_samples(const ProbeResult& r, const Demand& d) {
  Measurement m = measurement_from_probe(r);
  m.samples = true;
  m.samples_per_s = m.iops / synthetic_reads_per_sample(d, m.block_size);
  m.sample_bytes = double(*d.sample_bytes);
  return m;
}

Measurement measurement_from_dataset(const DatasetProbeResult& r) {
  Measurement m;
  m.dataset = true;
  m.samples = true;
  if (const LoaderRun* l = r.loader()) {
    m.samples_per_s = l->samples_per_s();
    m.iops = m.samples_per_s;
    m.bandwidth_bytes_per_s = l->bytes_per_s();
    m.p99_latency_ns = double(l->file_ns.percentile(99));
    m.measured_s = double(l->elapsed_ns) / 1e9;
    m.direct = l->direct;
    if (l->files_read > 0) m.sample_bytes = double(l->bytes_read) / double(l->files_read);
  }
  m.limit = r.limit.limit;
  m.limit_why = r.limit.why;
  m.device_class = r.storage.device_class;
  m.leaf_classes = leaf_classes(r.storage.stack);
  m.path = r.path;
  m.fs_type = r.storage.mount.fs_type;
  m.page_cache = r.page_cache;
  m.read_only = true;
  m.read_existing_files = true;
  m.files_bytes = static_cast<uint64_t>(std::max(0.0, r.scan.bytes_estimate));
  m.readable_bytes = m.files_bytes;
  m.stop_reason = r.stop_reason;
  return m;
}

}  // namespace iogate
