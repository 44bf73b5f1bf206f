#include "device/classify_disk.h"

#include <doctest/doctest.h>

#include "device/device_class.h"

using namespace iogate;

namespace {
DiskClassification nvme(const std::string& model, const std::string& transport = "pcie") {
  DiskFacts f;
  f.name = "nvme0n1";
  f.model = model;
  f.nvme_transport = transport;
  f.transport = "nvme";
  return classify_disk(f);
}
DiskClassification scsi(const std::string& vendor, const std::string& model, const std::string& path, bool rota) {
  DiskFacts f;
  f.name = "sda";
  f.vendor = vendor;
  f.model = model;
  f.sysfs_path = path;
  f.rotational = rota;
  f.transport = transport_from_path(f.name, path, "sd");
  return classify_disk(f);
}
}  // namespace

TEST_CASE("cloud NVMe model strings: network disks vs local instance storage") {
  CHECK(nvme("Amazon Elastic Block Store").device_class == DeviceClass::kCloudBlock);
  CHECK(nvme("Amazon EC2 NVMe Instance Storage").device_class == DeviceClass::kNvme);
  CHECK(nvme("nvme_card-pd").device_class == DeviceClass::kCloudBlock);
  CHECK(nvme("nvme_card").device_class == DeviceClass::kNvme);
  CHECK(nvme("nvme_card0").device_class == DeviceClass::kNvme);
  CHECK(nvme("nvme_card12").device_class == DeviceClass::kNvme);
  CHECK(nvme("MSFT NVMe Accelerator v1.0").device_class == DeviceClass::kCloudBlock);
  CHECK(nvme("Microsoft NVMe Direct Disk").device_class == DeviceClass::kNvme);
  auto local = nvme("Samsung SSD 980 PRO 1TB");
  CHECK(local.device_class == DeviceClass::kNvme);
  CHECK(local.reason.find("Samsung SSD 980 PRO 1TB") != std::string::npos);
  CHECK(nvme("nvme_card-pd").reason.find("Persistent Disk") != std::string::npos);
}

TEST_CASE("NVMe over fabrics by the controller's transport") {
  for (const char* t : {"tcp", "rdma", "fc"}) {
    auto c = nvme("Linux", t);
    CHECK(c.device_class == DeviceClass::kNvmeOf);
    CHECK(c.reason.find(t) != std::string::npos);
  }
}

TEST_CASE("rotational decides only between SSD and HDD on real SATA/SAS disks") {
  const char* ata = "/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
  const char* sas = "/sys/devices/pci0000:00/0000:03:00.0/host0/port-0:0/end_device-0:0/target0:0:0/0:0:0:0/block/sda";
  CHECK(scsi("ATA", "Samsung SSD 860", ata, false).device_class == DeviceClass::kSataSsd);
  CHECK(scsi("ATA", "ST4000NM0035", ata, true).device_class == DeviceClass::kHdd);
  CHECK(scsi("SEAGATE", "ST1200MM0088", sas, true).device_class == DeviceClass::kHdd);
  CHECK(scsi("HGST", "HUSMM1640ASS204", sas, false).device_class == DeviceClass::kSasSsd);
  CHECK(scsi("ATA", "x", ata, true).reason.find("rotational=1") != std::string::npos);
}

TEST_CASE("virtio, cloud SCSI, usb, iscsi and RAM") {
  DiskFacts v;
  v.name = "vda";
  v.driver = "virtio_blk";
  v.rotational = true;  // this machine's virtio disk says so; it means nothing
  v.transport = transport_from_path(v.name, "/sys/devices/pci0000:00/0000:00:05.0/virtio2/block/vda", v.driver);
  CHECK(v.transport == "virtio");
  CHECK(classify_disk(v).device_class == DeviceClass::kVirtio);
  const char* vscsi = "/sys/devices/pci0000:00/0000:00:03.0/virtio0/host0/target0:0:1/0:0:1:0/block/sda";
  CHECK(scsi("Google", "PersistentDisk", vscsi, false).device_class == DeviceClass::kCloudBlock);
  CHECK(scsi("Msft", "Virtual Disk", "/sys/devices/LNXSYSTM:00/VMBUS:00/x/host0/target0:0:0/0:0:0:0/block/sda", true)
            .device_class == DeviceClass::kCloudBlock);
  CHECK(scsi("QEMU", "QEMU HARDDISK", vscsi, true).device_class == DeviceClass::kVirtio);
  CHECK(scsi("SanDisk", "Ultra",
             "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sda", false)
            .device_class == DeviceClass::kUsb);
  CHECK(scsi("LIO-ORG", "disk", "/sys/devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sda", false)
            .device_class == DeviceClass::kCloudBlock);
  DiskFacts z;
  z.name = "zram0";
  CHECK(classify_disk(z).device_class == DeviceClass::kRam);
  DiskFacts m;
  m.name = "mmcblk0";
  CHECK(classify_disk(m).device_class == DeviceClass::kMmc);
  DiskFacts u;
  u.name = "weird0";
  CHECK(classify_disk(u).device_class == DeviceClass::kUnknown);
}

TEST_CASE("class names, slowness order and typical IOPS") {
  CHECK(device_class_name(DeviceClass::kCloudBlock) == "cloud-block");
  CHECK(device_class_name(DeviceClass::kSataSsd) == "sata-ssd");
  CHECK(device_class_slowness(DeviceClass::kHdd) > device_class_slowness(DeviceClass::kNvme));
  CHECK(device_class_slowness(DeviceClass::kCloudBlock) > device_class_slowness(DeviceClass::kSataSsd));
  CHECK(typical_randread_iops(DeviceClass::kHdd).high < typical_randread_iops(DeviceClass::kSataSsd).low);
  CHECK(class_for_randread_iops(250) == DeviceClass::kHdd);
  CHECK(class_for_randread_iops(30000) == DeviceClass::kSataSsd);
  CHECK(class_for_randread_iops(400000) == DeviceClass::kNvme);
}
