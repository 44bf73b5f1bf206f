#include "device/device_class.h"

namespace iogate {

std::string_view device_class_name(DeviceClass c) {
  switch (c) {
    case DeviceClass::kRam: return "ram";
    case DeviceClass::kNvme: return "nvme";
    case DeviceClass::kNvmeOf: return "nvme-of";
    case DeviceClass::kSasSsd: return "sas-ssd";
    case DeviceClass::kSataSsd: return "sata-ssd";
    case DeviceClass::kVirtio: return "virtio";
    case DeviceClass::kCloudBlock: return "cloud-block";
    case DeviceClass::kMmc: return "mmc";
    case DeviceClass::kUsb: return "usb";
    case DeviceClass::kHdd: return "hdd";
    case DeviceClass::kNetworkFs: return "network-fs";
    case DeviceClass::kMixed: return "mixed";
    case DeviceClass::kUnknown: return "unknown";
  }
  return "unknown";
}

const std::vector<DeviceClass>& all_device_classes() {
  static const std::vector<DeviceClass> kAll = {DeviceClass::kRam,        DeviceClass::kNvme,      DeviceClass::kNvmeOf,
                                                DeviceClass::kSasSsd,     DeviceClass::kSataSsd,   DeviceClass::kVirtio,
                                                DeviceClass::kCloudBlock, DeviceClass::kMmc,       DeviceClass::kUsb,
                                                DeviceClass::kHdd,        DeviceClass::kNetworkFs, DeviceClass::kMixed,
                                                DeviceClass::kUnknown};
  return kAll;
}

std::optional<DeviceClass> device_class_from_name(std::string_view name) {
  for (DeviceClass c : all_device_classes()) {
    if (device_class_name(c) == name) return c;
  }
  return std::nullopt;
}

std::string device_class_list(const std::vector<DeviceClass>& classes) {
  std::string out;
  for (DeviceClass c : classes) out += (out.empty() ? "" : ", ") + std::string(device_class_name(c));
  return out;
}

int device_class_slowness(DeviceClass c) {
  switch (c) {
    case DeviceClass::kRam: return 0;
    case DeviceClass::kNvme: return 1;
    case DeviceClass::kNvmeOf: return 2;
    case DeviceClass::kSasSsd: return 3;
    case DeviceClass::kSataSsd: return 3;
    case DeviceClass::kVirtio: return 4;
    case DeviceClass::kCloudBlock: return 5;
    case DeviceClass::kNetworkFs: return 6;
    case DeviceClass::kMmc: return 7;
    case DeviceClass::kUsb: return 8;
    case DeviceClass::kHdd: return 9;
    case DeviceClass::kMixed: return 10;
    case DeviceClass::kUnknown: return 10;
  }
  return 10;
}

IopsRange typical_randread_iops(DeviceClass c) {
  switch (c) {
    case DeviceClass::kRam: return {500000, 2000000};
    case DeviceClass::kNvme: return {100000, 1500000};
    case DeviceClass::kNvmeOf: return {50000, 1000000};
    case DeviceClass::kSasSsd: return {50000, 400000};
    case DeviceClass::kSataSsd: return {20000, 100000};
    case DeviceClass::kVirtio: return {5000, 300000};
    case DeviceClass::kCloudBlock: return {3000, 80000};
    case DeviceClass::kNetworkFs: return {1000, 100000};
    case DeviceClass::kMmc: return {1000, 10000};
    case DeviceClass::kUsb: return {500, 20000};
    case DeviceClass::kHdd: return {80, 400};
    case DeviceClass::kMixed:
    case DeviceClass::kUnknown: return {0, 0};
  }
  return {0, 0};
}

DeviceClass class_for_randread_iops(double iops) {
  for (DeviceClass c : {DeviceClass::kRam, DeviceClass::kNvme, DeviceClass::kSasSsd, DeviceClass::kSataSsd,
                        DeviceClass::kCloudBlock, DeviceClass::kMmc, DeviceClass::kUsb, DeviceClass::kHdd}) {
    if (iops >= double(typical_randread_iops(c).low)) return c;
  }
  return DeviceClass::kHdd;
}

}  // namespace iogate
