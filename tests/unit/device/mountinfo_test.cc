#include "device/mountinfo.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <string>

#include "temp_tree.h"

using namespace iogate;

namespace {

// Lines as real systems print them: a systemd host with btrfs subvolumes, a Docker/containerd
// container's overlay root, kubelet CSI volume mounts, a desktop's removable disk with a space.
constexpr const char* kHost =
    "22 1 0:26 /@ / rw,relatime shared:1 - btrfs /dev/nvme0n1p2 "
    "rw,ssd,discard=async,space_cache=v2,subvolid=256,subvol=/@\n"
    "23 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs devtmpfs rw,size=4096k,nr_inodes=2032465,mode=755,inode64\n"
    "24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "25 22 0:26 /@home /home rw,relatime shared:28 - btrfs /dev/nvme0n1p2 "
    "rw,ssd,discard=async,space_cache=v2,subvolid=257,subvol=/@home\n"
    "26 22 259:1 / /boot/efi rw,relatime shared:30 - vfat /dev/nvme0n1p1 "
    "rw,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,shortname=mixed,utf8,errors=remount-ro\n"
    "483 29 0:47 / /run/user/1000 rw,nosuid,nodev,relatime shared:263 master:5 - tmpfs tmpfs "
    "rw,size=1627284k,nr_inodes=406821,mode=700,uid=1000,gid=1000,inode64\n"
    "512 22 8:17 / /media/alice/My\\040Disk rw,nosuid,nodev,relatime shared:281 - exfat /dev/sdb1 "
    "rw,fmask=0022,dmask=0022,iocharset=utf8,errors=remount-ro\n"
    "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"
    "600 22 7:3 / /snap/core22/1380 ro,nodev,relatime shared:300 - squashfs /dev/loop3 "
    "ro,errors=continue,threads=single\n"
    "700 22 0:60 / /mnt/s3 rw,nosuid,nodev,relatime shared:400 - fuse.s3fs s3fs rw,user_id=0,group_id=0\n";

constexpr const char* kContainer =
    "1234 1100 0:52 / / rw,relatime master:300 - overlay overlay "
    "rw,lowerdir=/var/lib/docker/overlay2/l/ABCD:/var/lib/docker/overlay2/l/EFGH,upperdir=/var/lib/docker/overlay2/"
    "9f1c/diff,workdir=/var/lib/docker/overlay2/9f1c/work,nouserxattr\n"
    "1235 1234 0:55 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "1240 1234 259:3 /var/lib/kubelet/pods/5c0e/volumes/kubernetes.io~csi/pvc-1f2e/mount /data rw,relatime - ext4 "
    "/dev/nvme1n1 rw\n"
    "1241 1234 259:3 /var/lib/kubelet/pods/5c0e/etc-hosts /etc/hosts rw,relatime - ext4 /dev/nvme1n1 rw\n"
    "1242 1240 0:70 / /data/cache rw,relatime - tmpfs  rw,size=65536k\n"
    "1243 1234 259:4 / /database ro,relatime - xfs /dev/nvme2n1 rw,attr2,inode64,logbufs=8,logbsize=32k,noquota\n";

}  // namespace

TEST_CASE("mountinfo fields: ids, MAJ:MIN, root, options, fs type, source, super options") {
  auto m = parse_mountinfo(kHost);
  REQUIRE(m.size() == 10);
  const MountEntry& root = m[0];
  CHECK(root.mount_id == 22);
  CHECK(root.parent_id == 1);
  CHECK(root.major == 0);  // btrfs: an anonymous device, not the partition's 259:2
  CHECK(root.minor == 26);
  CHECK(root.root == "/@");
  CHECK(root.mount_point == "/");
  CHECK(root.mount_options == "rw,relatime");
  CHECK(root.fs_type == "btrfs");
  CHECK(root.source == "/dev/nvme0n1p2");
  CHECK(root.super_options == "rw,ssd,discard=async,space_cache=v2,subvolid=256,subvol=/@");
  CHECK_FALSE(root.read_only());

  CHECK(m[3].root == "/@home");
  CHECK(m[3].major == 0);
  CHECK(m[3].minor == 26);  // the same superblock as "/"
  CHECK(m[4].major == 259);
  CHECK(m[4].minor == 1);
  CHECK(m[4].fs_type == "vfat");
  CHECK(m[9].fs_type == "fuse.s3fs");
  CHECK(m[9].source == "s3fs");
}

TEST_CASE("mountinfo optional fields: none, one, several, all ending at the separator") {
  auto host = parse_mountinfo(kHost);
  auto container = parse_mountinfo(kContainer);
  REQUIRE(host.size() == 10);
  REQUIRE(container.size() == 6);
  CHECK(host[0].optional_fields == std::vector<std::string>{"shared:1"});
  CHECK(host[5].optional_fields == std::vector<std::string>{"shared:263", "master:5"});
  CHECK(host[5].fs_type == "tmpfs");
  CHECK(host[7].optional_fields == std::vector<std::string>{"master:1"});
  CHECK(host[7].root == "/mnt1");
  CHECK(host[7].mount_point == "/mnt2");
  CHECK(host[7].fs_type == "ext3");
  CHECK(container[1].optional_fields.empty());
  CHECK(container[1].fs_type == "proc");
  CHECK(container[1].super_options == "rw");
}

TEST_CASE("mountinfo overlay and bind-mounted CSI volume lines") {
  auto m = parse_mountinfo(kContainer);
  REQUIRE(m.size() == 6);
  CHECK(m[0].fs_type == "overlay");
  CHECK(m[0].source == "overlay");
  CHECK(m[0].major == 0);
  CHECK(m[0].super_options.find("upperdir=/var/lib/docker/overlay2/9f1c/diff") != std::string::npos);
  CHECK(m[2].mount_point == "/data");
  CHECK(m[2].root == "/var/lib/kubelet/pods/5c0e/volumes/kubernetes.io~csi/pvc-1f2e/mount");
  CHECK(m[2].major == 259);
  CHECK(m[2].minor == 3);
  // An empty source is an empty field (two spaces), not a shift of the fields after it.
  CHECK(m[4].fs_type == "tmpfs");
  CHECK(m[4].source.empty());
  CHECK(m[4].super_options == "rw,size=65536k");
}

TEST_CASE("mountinfo octal escapes are undone in mount point, root and source") {
  auto m = parse_mountinfo(kHost);
  REQUIRE(m.size() == 10);
  CHECK(m[6].mount_point == "/media/alice/My Disk");
  auto odd = parse_mountinfo(
      "90 22 8:33 /dir\\011with\\012controls /mnt/back\\134slash\\040and\\040tab\\011 rw,relatime - ext4 "
      "/dev/disk\\040one rw\n");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].root == "/dir\twith\ncontrols");
  CHECK(odd[0].mount_point == "/mnt/back\\slash and tab\t");
  CHECK(odd[0].source == "/dev/disk one");
  // A backslash not followed by three octal digits is kept as it is.
  auto plain = parse_mountinfo("91 22 8:33 / /mnt/a\\9b rw - ext4 /dev/sdc1 rw\n");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].mount_point == "/mnt/a\\9b");
}

TEST_CASE("mountinfo malformed lines are skipped and the rest kept") {
  auto m = parse_mountinfo(
      "\n"
      "garbage\n"
      "24 22 0:22 / /proc rw,nosuid shared:12 proc proc rw\n"                         // no separator
      "x 22 0:22 / /proc rw - proc proc rw\n"                                         // non-numeric id
      "25 22 0x22 / /proc rw - proc proc rw\n"                                        // no MAJ:MIN
      "26 22 8:1 / /mnt rw shared:1 - ext4 /dev/sda\n"                                // too few fields after "-"
      "27 22 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\r\n"  // kept
      "28 27 0:30 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw");                 // kept, no final newline
  REQUIRE(m.size() == 2);
  CHECK(m[0].mount_id == 27);
  CHECK(m[0].super_options == "rw,errors=remount-ro");  // "\r" stripped
  CHECK(m[1].mount_point == "/tmp");
  CHECK(m[1].super_options == "rw");
}

TEST_CASE("read_only: ro in the mount options or in the superblock options, as a whole option") {
  MountEntry e;
  e.mount_options = "rw,relatime";
  e.super_options = "rw,errors=remount-ro";
  CHECK_FALSE(e.read_only());  // "remount-ro" is not "ro"
  e.mount_options = "ro,relatime";
  CHECK(e.read_only());
  e.mount_options = "rw,relatime";
  e.super_options = "ro,errors=remount-ro";
  CHECK(e.read_only());
  auto m = parse_mountinfo(kContainer);
  REQUIRE(m.size() == 6);
  CHECK(m[5].read_only());  // read-only bind of a writable xfs
  CHECK_FALSE(m[2].read_only());
  auto host = parse_mountinfo(kHost);
  CHECK(host[8].read_only());  // squashfs snap
}

TEST_CASE("find_mount_for_path: longest prefix on a component boundary") {
  auto m = parse_mountinfo(kContainer);
  REQUIRE(m.size() == 6);
  auto at = [&](std::string_view p) -> std::string {
    const MountEntry* e = find_mount_for_path(m, p);
    return e ? e->mount_point : "(none)";
  };
  CHECK(at("/") == "/");
  CHECK(at("/usr/bin/env") == "/");
  CHECK(at("/data") == "/data");
  CHECK(at("/data/") == "/data");
  CHECK(at("/data/shards/00001.tar") == "/data");
  CHECK(at("/database") == "/database");
  CHECK(at("/database/pg") == "/database");
  CHECK(at("/datab") == "/");
  CHECK(at("/data/cache/x") == "/data/cache");
  CHECK(at("/data/cachex") == "/data");
  CHECK(at("/etc/hosts") == "/etc/hosts");
  CHECK(at("/etc/hostname") == "/");
  CHECK(at("relative/path") == "(none)");
  CHECK(at("") == "(none)");
  CHECK(find_mount_for_path({}, "/data") == nullptr);
}

TEST_CASE("find_mount_for_path: the last of several mounts at one mount point wins") {
  auto m = parse_mountinfo(
      "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
      "24 26 0:22 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=100k\n"
      "29 24 0:26 / /dev/shm rw,relatime - tmpfs shm rw,size=200k\n"
      "40 26 8:1 / /scratch rw - ext4 /dev/sda1 rw\n"
      "41 40 8:17 / /scratch rw - xfs /dev/sdb1 rw\n");
  REQUIRE(m.size() == 5);
  const MountEntry* shm = find_mount_for_path(m, "/dev/shm/seg");
  REQUIRE(shm != nullptr);
  CHECK(shm->mount_id == 29);
  CHECK(shm->source == "shm");
  const MountEntry* scratch = find_mount_for_path(m, "/scratch");
  REQUIRE(scratch != nullptr);
  CHECK(scratch->fs_type == "xfs");
  CHECK(scratch->major == 8);
  CHECK(scratch->minor == 17);
}

TEST_CASE("read_mountinfo reads <proc_root>/self/mountinfo and names the path when it cannot") {
  testing::TempTree tree;
  REQUIRE_FALSE(tree.root.empty());
  tree.write("self/mountinfo", kContainer);
  auto m = read_mountinfo(tree.root.string());
  REQUIRE(m.ok());
  CHECK(m->size() == 6);
  CHECK(m->at(2).mount_point == "/data");

  auto missing = read_mountinfo((tree.root / "nonexistent").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::kRuntime);
  CHECK(missing.error().os_errno == ENOENT);
  CHECK(missing.error().message.find("self/mountinfo") != std::string::npos);
}

TEST_CASE("live: this machine's mountinfo holds / and /proc") {
  auto m = read_mountinfo();
  REQUIRE(m.ok());
  REQUIRE_FALSE(m->empty());
  const MountEntry* root = find_mount_for_path(*m, "/");
  REQUIRE(root != nullptr);
  CHECK(root->mount_point == "/");
  CHECK_FALSE(root->fs_type.empty());
  const MountEntry* proc = find_mount_for_path(*m, "/proc");
  REQUIRE(proc != nullptr);
  CHECK(proc->mount_point == "/proc");
  CHECK(proc->fs_type == "proc");
  const MountEntry* self = find_mount_for_path(*m, "/proc/self/mountinfo");
  REQUIRE(self != nullptr);
  CHECK(self->fs_type == "proc");
  // For file systems on one block device, MAJ:MIN is what stat(2) reports as st_dev.
  if (root->fs_type == "ext4" || root->fs_type == "xfs") {
    struct stat st;
    REQUIRE(stat("/", &st) == 0);
    CHECK(root->major == major(st.st_dev));
    CHECK(root->minor == minor(st.st_dev));
  }
}
