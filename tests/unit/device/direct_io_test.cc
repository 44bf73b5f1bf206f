#include "device/direct_io.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "base/unique_fd.h"
#include "device/mountinfo.h"
#include "temp_tree.h"

using namespace iogate;
using iogate::testing::TempFile;
using iogate::testing::TempTree;

namespace {

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

TEST_CASE("statfs magics map to the names mountinfo uses") {
  CHECK(fs_type_from_statfs_magic(0x01021994) == "tmpfs");
  CHECK(fs_type_from_statfs_magic(0x858458f6) == "ramfs");
  CHECK(fs_type_from_statfs_magic(0x958458f6) == "hugetlbfs");
  CHECK(fs_type_from_statfs_magic(0xEF53) == "ext4");  // ext2 and ext3 share it
  CHECK(fs_type_from_statfs_magic(0x58465342) == "xfs");
  CHECK(fs_type_from_statfs_magic(0x9123683E) == "btrfs");
  CHECK(fs_type_from_statfs_magic(0x6969) == "nfs");
  CHECK(fs_type_from_statfs_magic(0x65735546) == "fuse");  // virtiofs, s3fs, gcsfuse alike
  CHECK(fs_type_from_statfs_magic(0x794c7630) == "overlay");
  CHECK(fs_type_from_statfs_magic(0x01021997) == "9p");
  CHECK(fs_type_from_statfs_magic(0x00c36400) == "ceph");
  CHECK(fs_type_from_statfs_magic(0xFF534D42) == "cifs");
  CHECK(fs_type_from_statfs_magic(0xFE534D42) == "smb2");
  CHECK(fs_type_from_statfs_magic(0x2fc12fc1) == "zfs");
  CHECK(fs_type_from_statfs_magic(0xF2F52010) == "f2fs");
  CHECK(fs_type_from_statfs_magic(0x73717368) == "squashfs");
  CHECK(fs_type_from_statfs_magic(0x0bd00bd0) == "lustre");
  CHECK(fs_type_from_statfs_magic(0x9fa0) == "proc");
}

TEST_CASE("statfs magics: sign-extended 32-bit values and unknown ones") {
  // 0xFF534D42 as a 32-bit signed long arrives negative.
  CHECK(fs_type_from_statfs_magic(static_cast<int32_t>(0xFF534D42u)) == "cifs");
  CHECK(fs_type_from_statfs_magic(static_cast<int32_t>(0x858458f6u)) == "ramfs");
  CHECK(is_memory_fs_magic(static_cast<int32_t>(0x958458f6u)));
  CHECK(fs_type_from_statfs_magic(0x12345678) == "unknown(0x12345678)");
  CHECK(fs_type_from_statfs_magic(0) == "unknown(0x0)");
  CHECK(fs_type_from_statfs_magic(0x1000000000LL) == "unknown(0x1000000000)");
}

TEST_CASE("memory file systems are tmpfs, ramfs and hugetlbfs only") {
  CHECK(is_memory_fs_magic(0x01021994));
  CHECK(is_memory_fs_magic(0x858458f6));
  CHECK(is_memory_fs_magic(0x958458f6));
  CHECK_FALSE(is_memory_fs_magic(0xEF53));
  CHECK_FALSE(is_memory_fs_magic(0x794c7630));  // overlay: its upper dir may be on disk
  CHECK_FALSE(is_memory_fs_magic(0x65735546));
  CHECK_FALSE(is_memory_fs_magic(0));
}

TEST_CASE("bad descriptors: alignment unknown, statfs an error with errno") {
  DirectIoAlignment a = query_direct_io_alignment(-1);
  CHECK_FALSE(a.known);
  CHECK(a.offset_align == 0);
  auto m = statfs_magic(-1);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().os_errno == EBADF);
  CHECK(m.error().kind == ErrorKind::kRuntime);
}

TEST_CASE("live: /dev/shm is tmpfs, a memory file system") {
  UniqueFd fd(open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd.valid());
  auto m = statfs_magic(fd.get());
  REQUIRE(m.ok());
  CHECK(fs_type_from_statfs_magic(*m) == "tmpfs");
  CHECK(is_memory_fs_magic(*m));
}

TEST_CASE("live: a file in /tmp: statfs agrees with mountinfo, and its O_DIRECT alignment") {
  TempFile f("/tmp");
  REQUIRE(f.fd.valid());
  auto m = statfs_magic(f.fd.get());
  REQUIRE(m.ok());
  const std::string name = fs_type_from_statfs_magic(*m);
  CHECK(name.rfind("unknown(", 0) != 0);

  auto mounts = read_mountinfo();
  REQUIRE(mounts.ok());
  char real[4096];
  REQUIRE(realpath(f.path.c_str(), real) != nullptr);
  const MountEntry* mount = find_mount_for_path(*mounts, real);
  REQUIRE(mount != nullptr);
  if (mount->fs_type == "ext2" || mount->fs_type == "ext3") {
    CHECK(name == "ext4");
  } else if (mount->fs_type.rfind("fuse", 0) == 0 || mount->fs_type == "virtiofs") {
    CHECK(name == "fuse");
  } else {
    CHECK(name == mount->fs_type);
  }

  DirectIoAlignment a = query_direct_io_alignment(f.fd.get());
  MESSAGE("/tmp is " << name << ": dio known=" << a.known << " mem_align=" << a.mem_align
                     << " offset_align=" << a.offset_align);
  if (name == "ext4" || name == "xfs") {
    // Both fill in STATX_DIOALIGN since 6.1; on older kernels the field is simply unknown.
    if (a.known) {
      CHECK(power_of_two(a.offset_align));
      CHECK(a.offset_align >= 512);
      CHECK(a.offset_align <= 65536);
      CHECK(power_of_two(a.mem_align));
      CHECK(a.mem_align <= a.offset_align);
      // The alignment it reports is one O_DIRECT really accepts.
      UniqueFd direct(open(f.path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
      REQUIRE(direct.valid());
      void* buf = nullptr;
      REQUIRE(posix_memalign(&buf, a.offset_align, a.offset_align) == 0);
      std::memset(buf, 0x5a, a.offset_align);
      CHECK(pwrite(direct.get(), buf, a.offset_align, a.offset_align) == static_cast<ssize_t>(a.offset_align));
      free(buf);
    }
  } else if (!a.known) {
    CHECK(a.offset_align == 0);
  }
}
