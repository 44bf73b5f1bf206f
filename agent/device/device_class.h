// What kind of storage a device or volume is, and how fast that kind usually is.
//
// The class is decided from the driver, transport and model first; queue/rotational only decides
// between SSD and HDD on real SATA/SAS disks, because virtio, loop and dm-over-loop report 1 for
// flash and cloud network disks report 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iogate {

enum class DeviceClass {
  kRam,     // tmpfs, ramfs, zram, brd: memory
  kNvme,    // a local NVMe SSD (also cloud instance storage)
  kNvmeOf,  // NVMe over TCP, RDMA or FC
  kSasSsd,
  kSataSsd,
  kVirtio,      // a virtual disk of a VM (virtio-blk, virtio-scsi, xen)
  kCloudBlock,  // a network-attached cloud disk, even when exposed as NVMe or SCSI
  kMmc,
  kUsb,
  kHdd,        // rotational SATA/SAS
  kNetworkFs,  // NFS, SMB, Ceph, Lustre, FUSE, 9p, virtiofs, ...
  kMixed,      // a dm/md volume over leaves of different classes
  kUnknown,
};

std::string_view device_class_name(DeviceClass c);  // "nvme", "sata-ssd", ...
// Every class, in the order above: what a policy may name and how the names are listed.
const std::vector<DeviceClass>& all_device_classes();
std::optional<DeviceClass> device_class_from_name(std::string_view name);
// The classes' names joined with ", ": "nvme, sata-ssd".
std::string device_class_list(const std::vector<DeviceClass>& classes);

// Slower classes rank higher; a volume over several leaves goes at the pace of its slowest.
int device_class_slowness(DeviceClass c);

// The 4k random-read IOPS a healthy device of the class typically serves at QD32 (documented in
// docs/manual.md, "Classes"), so a probe can say "HDD-like" about a network volume.
struct IopsRange {
  uint64_t low = 0, high = 0;
};
IopsRange typical_randread_iops(DeviceClass c);

// The fastest class whose typical range starts at or below `iops`: what a volume "performs like".
DeviceClass class_for_randread_iops(double iops);

}  // namespace iogate
