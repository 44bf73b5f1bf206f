#include "device/block_device.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "device/mountinfo.h"
#include "temp_tree.h"

using namespace iogate;

namespace {

// A fake /sys laid out as the kernel lays it out: the device tree under devices/ and the
// MAJ:MIN index under dev/block as relative symlinks into it.
struct FakeSysfs {
  testing::TempTree tree;
  FakeSysfs() {
    const std::string vda = "devices/pci0000:00/0000:00:04.0/virtio1/block/vda";
    tree.write(vda + "/dev", "254:0\n");
    tree.write(vda + "/size", "536870912\n");  // 256 GiB
    tree.write(vda + "/queue/logical_block_size", "512\n");
    tree.write(vda + "/queue/physical_block_size", "512\n");
    tree.write(vda + "/queue/rotational", "1\n");  // virtio-blk: says 1 whatever is behind it
    tree.write(vda + "/vda1/dev", "254:1\n");
    tree.write(vda + "/vda1/partition", "1\n");
    tree.write(vda + "/vda1/start", "2048\n");
    tree.write(vda + "/vda1/size", "536868864\n");
    tree.symlink("../../devices/pci0000:00/0000:00:04.0/virtio1/block/vda", "dev/block/254:0");
    tree.symlink("../../devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1", "dev/block/254:1");

    const std::string nvme = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1";
    tree.write(nvme + "/size", "7501476528\n");
    tree.write(nvme + "/queue/logical_block_size", "4096\n");
    tree.write(nvme + "/queue/physical_block_size", "4096\n");
    tree.write(nvme + "/queue/rotational", "0\n");
    tree.write(nvme + "/nvme0n1p2/partition", "2\n");
    tree.write(nvme + "/nvme0n1p2/size", "7499378688\n");
    tree.symlink("../../" + nvme + "/nvme0n1p2", "dev/block/259:2");

    tree.write("devices/virtual/block/loop3/size", "131072\n");
    tree.write("devices/virtual/block/loop3/queue/logical_block_size", "512\n");
    tree.write("devices/virtual/block/loop3/queue/physical_block_size", "4096\n");
    tree.write("devices/virtual/block/loop3/queue/rotational", "0\n");
    tree.symlink("../../devices/virtual/block/loop3", "dev/block/7:3");

    // A device-mapper target whose queue/ attributes are missing, and one with no size.
    tree.write("devices/virtual/block/dm-0/size", "2097152\n");
    tree.symlink("../../devices/virtual/block/dm-0", "dev/block/253:0");
    tree.write("devices/virtual/block/dm-1/dev", "253:1\n");
    tree.symlink("../../devices/virtual/block/dm-1", "dev/block/253:1");
  }
  std::string root() const { return tree.root.string(); }
};

}  // namespace

TEST_CASE("a whole disk: name, size and queue attributes of its own") {
  FakeSysfs sys;
  auto d = read_block_device(254, 0, sys.root());
  REQUIRE(d.ok());
  CHECK(d->name == "vda");
  CHECK(d->major == 254);
  CHECK(d->minor == 0);
  CHECK_FALSE(d->is_partition);
  CHECK(d->parent_name.empty());
  CHECK(d->size_bytes == 536870912ULL * 512);
  CHECK(d->logical_block_size == 512);
  CHECK(d->physical_block_size == 512);
  CHECK(d->rotational);
}

TEST_CASE("a partition: its disk is the parent directory, and the queue attributes are the disk's") {
  FakeSysfs sys;
  auto p = read_block_device(254, 1, sys.root());
  REQUIRE(p.ok());
  CHECK(p->name == "vda1");
  CHECK(p->is_partition);
  CHECK(p->parent_name == "vda");
  CHECK(p->size_bytes == 536868864ULL * 512);  // the partition's own size, not the disk's
  CHECK(p->rotational);

  auto n = read_block_device(259, 2, sys.root());
  REQUIRE(n.ok());
  CHECK(n->name == "nvme0n1p2");
  CHECK(n->is_partition);
  CHECK(n->parent_name == "nvme0n1");
  CHECK(n->logical_block_size == 4096);
  CHECK(n->physical_block_size == 4096);
  CHECK_FALSE(n->rotational);
  CHECK(n->size_bytes == 7499378688ULL * 512);
}

TEST_CASE("virtual devices: loop with 512/4096 blocks, dm without queue attributes keeps defaults") {
  FakeSysfs sys;
  auto loop = read_block_device(7, 3, sys.root());
  REQUIRE(loop.ok());
  CHECK(loop->name == "loop3");
  CHECK_FALSE(loop->is_partition);
  CHECK(loop->logical_block_size == 512);
  CHECK(loop->physical_block_size == 4096);
  CHECK(loop->size_bytes == 64ULL << 20);

  auto dm = read_block_device(253, 0, sys.root());
  REQUIRE(dm.ok());
  CHECK(dm->name == "dm-0");
  CHECK(dm->logical_block_size == 512);
  CHECK(dm->physical_block_size == 512);
  CHECK_FALSE(dm->rotational);
  CHECK(dm->size_bytes == 1ULL << 30);
}

TEST_CASE("errors name the device or the attribute") {
  FakeSysfs sys;
  auto absent = read_block_device(0, 42, sys.root());
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.error().kind == ErrorKind::kRuntime);
  CHECK(absent.error().os_errno == ENOENT);
  CHECK(absent.error().message.find("0:42") != std::string::npos);

  auto no_size = read_block_device(253, 1, sys.root());
  REQUIRE_FALSE(no_size.ok());
  CHECK(no_size.error().message.find("dm-1/size") != std::string::npos);
}

TEST_CASE("live: this machine's root block device, where / is on one") {
  auto mounts = read_mountinfo();
  REQUIRE(mounts.ok());
  const MountEntry* root = find_mount_for_path(*mounts, "/");
  REQUIRE(root != nullptr);
  if (root->major == 0) {
    MESSAGE("/ is " << root->fs_type << " on a pseudo-device: no block device to read");
    CHECK_FALSE(read_block_device(root->major, root->minor).ok());
    return;
  }
  auto d = read_block_device(root->major, root->minor);
  REQUIRE(d.ok());
  CHECK_FALSE(d->name.empty());
  CHECK(d->size_bytes > 0);
  CHECK(d->logical_block_size >= 512);
  CHECK(d->physical_block_size >= d->logical_block_size);
  CHECK((d->logical_block_size & (d->logical_block_size - 1)) == 0);
  if (d->is_partition) CHECK_FALSE(d->parent_name.empty());
  // sysfs's own dev attribute agrees with the MAJ:MIN the device was found by.
  struct stat st;
  std::string dev_node = "/dev/" + d->name;
  if (stat(dev_node.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    CHECK(major(st.st_rdev) == root->major);
    CHECK(minor(st.st_rdev) == root->minor);
  }
}
