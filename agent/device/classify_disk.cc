#include "device/classify_disk.h"

#include <fmt/format.h>

#include <string_view>

namespace iogate {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// "nvme_card", "nvme_card0", "nvme_card12": GCP Local SSD. "nvme_card-pd" is Persistent Disk.
bool is_gcp_local_ssd(std::string_view model) {
  if (!starts_with(model, "nvme_card")) return false;
  std::string_view rest = model.substr(9);
  for (char c : rest) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

DiskClassification by_rotational(const DiskFacts& f, DeviceClass ssd, std::string_view bus) {
  if (f.rotational) return {DeviceClass::kHdd, fmt::format("{}: {} disk with queue/rotational=1", f.name, bus)};
  return {ssd, fmt::format("{}: {} disk with queue/rotational=0", f.name, bus)};
}

std::string with_model(const DiskFacts& f) { return f.model.empty() ? "" : fmt::format(", model \"{}\"", f.model); }

}  // namespace

std::string transport_from_path(const std::string& name, const std::string& path, const std::string& driver) {
  if (starts_with(name, "nvme")) return "nvme";
  if (starts_with(name, "mmcblk")) return "mmc";
  if (starts_with(name, "vd") || driver == "virtio_blk") return "virtio";
  if (contains(path, "/usb")) return "usb";
  if (contains(path, "/ata")) return "sata";
  if (contains(path, "/end_device-") || contains(path, "/sas_")) return "sas";
  if (contains(path, "/rport-")) return "fc";
  if (contains(path, "/session")) return "iscsi";
  if (contains(path, "/virtio")) return "virtio";  // virtio-scsi
  return "";
}

DiskClassification classify_disk(const DiskFacts& f) {
  const std::string& m = f.model;
  if (starts_with(f.name, "zram") || starts_with(f.name, "ram")) {
    return {DeviceClass::kRam, fmt::format("{}: a RAM-backed block device", f.name)};
  }
  if (starts_with(f.name, "nvme")) {
    const std::string& t = f.nvme_transport;
    if (t == "tcp" || t == "rdma" || t == "fc") {
      return {DeviceClass::kNvmeOf, fmt::format("{}: NVMe over {} (controller transport){}", f.name, t, with_model(f))};
    }
    if (m == "Amazon Elastic Block Store") {
      return {DeviceClass::kCloudBlock,
              fmt::format("{}: model \"{}\" is AWS EBS, a network disk exposed as NVMe", f.name, m)};
    }
    if (m == "nvme_card-pd") {
      return {
          DeviceClass::kCloudBlock,
          fmt::format("{}: model \"{}\" is GCP Persistent Disk/Hyperdisk, a network disk exposed as NVMe", f.name, m)};
    }
    if (m == "MSFT NVMe Accelerator v1.0") {
      return {DeviceClass::kCloudBlock,
              fmt::format("{}: model \"{}\" is an Azure remote disk exposed as NVMe", f.name, m)};
    }
    if (m == "Amazon EC2 NVMe Instance Storage") {
      return {DeviceClass::kNvme, fmt::format("{}: model \"{}\" is AWS instance storage, a local NVMe SSD", f.name, m)};
    }
    if (is_gcp_local_ssd(m)) {
      return {DeviceClass::kNvme, fmt::format("{}: model \"{}\" is GCP Local SSD, a local NVMe SSD", f.name, m)};
    }
    if (m == "Microsoft NVMe Direct Disk") {
      return {DeviceClass::kNvme, fmt::format("{}: model \"{}\" is an Azure local NVMe disk", f.name, m)};
    }
    return {DeviceClass::kNvme, fmt::format("{}: NVMe over {}{}", f.name, t.empty() ? "pcie" : t, with_model(f))};
  }
  if (f.vendor == "Google" && m == "PersistentDisk") {
    return {DeviceClass::kCloudBlock,
            fmt::format("{}: SCSI vendor \"Google\" model \"PersistentDisk\" is GCP Persistent Disk", f.name)};
  }
  if (f.vendor == "Msft" && (m == "Virtual Disk" || m == "Virtual_Disk")) {
    return {DeviceClass::kCloudBlock,
            fmt::format("{}: SCSI vendor \"Msft\" model \"{}\" is an Azure managed disk", f.name, m)};
  }
  if (starts_with(f.name, "mmcblk")) return {DeviceClass::kMmc, fmt::format("{}: an MMC/SD card", f.name)};
  if (starts_with(f.name, "nbd") || starts_with(f.name, "rbd")) {
    return {DeviceClass::kCloudBlock, fmt::format("{}: a network block device ({})", f.name, f.name.substr(0, 3))};
  }
  if (starts_with(f.name, "xvd")) return {DeviceClass::kVirtio, fmt::format("{}: a Xen virtual disk", f.name)};
  const std::string& tr = f.transport;
  if (tr == "virtio") {
    return {DeviceClass::kVirtio,
            fmt::format("{}: a virtio disk{}, a VM's virtual disk (queue/rotational={} says nothing "
                        "about the medium)",
                        f.name, f.driver.empty() ? "" : fmt::format(" (driver {})", f.driver), f.rotational ? 1 : 0)};
  }
  if (tr == "usb") return {DeviceClass::kUsb, fmt::format("{}: a USB disk{}", f.name, with_model(f))};
  if (tr == "iscsi")
    return {DeviceClass::kCloudBlock, fmt::format("{}: an iSCSI LUN, network-attached block storage", f.name)};
  if (tr == "fc")
    return {DeviceClass::kCloudBlock, fmt::format("{}: a Fibre Channel LUN, network-attached block storage", f.name)};
  if (tr == "sata") return by_rotational(f, DeviceClass::kSataSsd, "SATA");
  if (tr == "sas") return by_rotational(f, DeviceClass::kSasSsd, "SAS");
  return {DeviceClass::kUnknown, fmt::format("{}: no known driver, transport or model{} (queue/rotational={})", f.name,
                                             with_model(f), f.rotational ? 1 : 0)};
}

}  // namespace iogate
