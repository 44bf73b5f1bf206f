// The caveats a measurement carries whatever the policy says: ways the same numbers could mean
// something else in production. Each is one sentence, only where its condition holds, and says
// what the probe did about it, because a reader must decide whether to trust a pass.
#include <algorithm>

#include <fmt/format.h>

#include "base/units.h"
#include "policy/evaluate.h"

namespace iogate {
namespace {

bool is_or_has(const Measurement& m, DeviceClass c) {
  return m.device_class == c || std::find(m.leaf_classes.begin(), m.leaf_classes.end(), c) != m.leaf_classes.end();
}

}  // namespace

std::vector<std::string> measurement_caveats(const Policy& p, const Measurement& m) {
  std::vector<std::string> out;
  if (m.page_cache || m.device_class == DeviceClass::kRam) {
    out.push_back(
        "Measured on memory (tmpfs, ramfs or zram), not storage: such volumes serve 500,000-2,000,000 4k reads a "
        "second and lose their data with the node, so this says nothing about a disk.");
  }
  // A dataset run reads buffered by design (as a DataLoader does) and drops each file after it.
  if (!m.direct && !m.dataset) {
    out.push_back(
        "O_DIRECT was refused, so the probe used buffered I/O: re-read blocks can come from the page cache at memory "
        "speed, and the figures may be optimistic.");
  }
  if (is_or_has(m, DeviceClass::kCloudBlock)) {
    out.push_back(
        "Cloud block volumes can run on burst credits: AWS gp2 bursts to 3,000 IOPS for about 30 minutes from its "
        "initial 5.4 million credits, then drops to its baseline of 3 IOPS per GiB (100 minimum), so the sustained "
        "rate may be lower than measured.");
    if (m.wrote_test_file) {
      out.push_back(
          "A volume restored from a snapshot fetches each block from object storage on its first read; this probe "
          "read its own freshly written test file, so a restored dataset may read slower than this the first time.");
    } else if (m.read_existing_files) {
      out.push_back(
          "A volume restored from a snapshot fetches each block from object storage on its first read; if this one "
          "was, the probe paid that cost on blocks not yet fetched, so the result may be pessimistic now and improve "
          "once every block has been read once.");
    }
  }
  if (m.read_block_device) {
    out.push_back(
        "The probe read a raw block device, where written and never-written blocks look alike: on a thin-provisioned "
        "or freshly created volume unwritten blocks return zeros without touching the media, so the result may be "
        "optimistic.");
  } else if (m.read_existing_files && m.files_bytes > m.readable_bytes) {
    out.push_back(fmt::format(
        "{} of the {} in the files read were holes or unwritten extents, which return zeros without touching the "
        "disk; the probe skipped them and read only the {} written.",
        format_bytes(double(m.files_bytes - m.readable_bytes)), format_bytes(double(m.files_bytes)),
        format_bytes(double(m.readable_bytes))));
  }
  if (is_or_has(m, DeviceClass::kNetworkFs) && !m.dataset) {
    out.push_back(
        "On a network file system every small file also costs metadata round trips (open, stat: typically 0.1-1 ms "
        "each) that this probe of large files does not measure, so a dataset of many small files may read slower.");
  }
  if (m.checkpoint && m.checkpoint->save.valid() && m.checkpoint->extrapolated) {
    out.push_back(fmt::format(
        "The checkpoint's save was measured with {} written, not the whole checkpoint, and read off the line through "
        "its rounds: a volume that slows once a write cache or a burst allowance is spent (cloud disks, write-back "
        "caches) saves a large checkpoint slower than this.",
        format_bytes(double(m.checkpoint->bytes_written))));
  }
  if (m.checkpoint && m.checkpoint->save.valid()) {
    out.push_back(
        "A save's time here is the storage's part: a client's own serialisation (torch.save pickling and copying "
        "tensors) adds its CPU time where it does not overlap the writes, and asynchronous checkpointing stalls "
        "training only for the copy to host memory.");
  }
  if (m.stop_reason == StopReason::kSignal) {
    out.push_back(fmt::format("The probe was interrupted after {}, so the figures cover only that part.",
                              format_duration_ns(m.measured_s * 1e9)));
  } else if (m.stop_reason == StopReason::kRuntime && p.early_stop && m.ci_half_width_relative &&
             *m.ci_half_width_relative > p.stop_tolerance) {
    out.push_back(fmt::format(
        "The result had not settled when the {} runtime limit ended: the {} confidence interval was ±{} (tolerance "
        "±{}).",
        format_duration_compact(p.workload.runtime.count()),
        format_percent(m.ci_confidence.value_or(p.stop_confidence)), format_percent(*m.ci_half_width_relative),
        format_percent(p.stop_tolerance)));
  }
  return out;
}

}  // namespace iogate
