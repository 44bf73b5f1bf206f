// The class of one whole disk (a leaf of the storage stack) from what sysfs says about it.
// Pure: the facts are gathered by storage_stack.cc, so fixtures and unit tests can feed them.
#pragma once

#include <string>

#include "device/device_class.h"

namespace iogate {

struct DiskFacts {
  std::string name;            // "nvme0n1", "sda", "vda", "mmcblk0", "zram0"
  std::string sysfs_path;      // the disk's resolved directory under /sys/devices
  std::string transport;       // as lsblk's TRAN: nvme, sata, sas, usb, virtio, iscsi, fc, mmc; or an NVMe fabric
  std::string nvme_transport;  // the NVMe controller's transport file: pcie, tcp, rdma, fc, loop
  std::string model;           // trimmed of the padding SCSI and NVMe add
  std::string vendor;
  std::string driver;  // of the device: virtio_blk, nvme, sd, ...
  bool rotational = false;
};

struct DiskClassification {
  DeviceClass device_class = DeviceClass::kUnknown;
  std::string reason;  // which attribute decided, in a sentence fragment naming the disk
};

// The transport the way lsblk finds TRAN: from the name and the device path.
std::string transport_from_path(const std::string& name, const std::string& sysfs_path, const std::string& driver);

DiskClassification classify_disk(const DiskFacts& facts);

}  // namespace iogate
