// What sysfs says about one block device, found by its MAJ:MIN (as mountinfo gives it).
//
// /sys/dev/block/MAJ:MIN is a symlink into the device tree, e.g.
//   ../../devices/pci0000:00/0000:00:05.0/virtio2/block/vda/vda1   (a partition: its disk is the parent dir)
//   ../../devices/virtual/block/loop0                             (loop, dm-N, md, zram)
// The path is resolved from the link text, not by canonicalising through the real file system,
// so the same code walks a fake tree under a temp dir in tests.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace iogate {

struct BlockDeviceInfo {
  std::string name;  // kernel name: the resolved link's basename, e.g. "vda", "nvme0n1p2", "loop3", "dm-0"
  uint32_t major = 0, minor = 0;
  bool is_partition = false;  // the device's directory has a "partition" file
  std::string parent_name;    // the whole disk of a partition ("vda" for "vda1"), else empty
  // From queue/, which only whole disks have: a partition reports its disk's. Kept at 512 when
  // queue/ lacks them (512 is what every block device accepts for O_DIRECT).
  uint32_t logical_block_size = 512, physical_block_size = 512;
  // queue/rotational as reported. virtio, loop and some RAID controllers say 1 for flash and 0 for
  // spinning disks alike; deciding what the medium really is belongs to later code.
  bool rotational = false;
  uint64_t size_bytes = 0;  // "size" (always in 512-byte sectors) * 512
};

// Errors when <sysfs_root>/dev/block/MAJ:MIN does not exist (0:N pseudo-devices never do) or the
// device has no readable "size"; missing queue/ attributes keep their defaults.
Result<BlockDeviceInfo> read_block_device(uint32_t major, uint32_t minor, const std::string& sysfs_root = "/sys");

// Where a sysfs symlink points: its text resolved against the link's own directory, lexically.
// A path that exists but is no symlink is returned as it is.
Result<std::string> resolve_sysfs_link(const std::string& link);

}  // namespace iogate
