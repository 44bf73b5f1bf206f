// Only <linux/stat.h>'s struct statx has stx_dio_mem_align / stx_dio_offset_align (glibc 2.36's
// own struct statx predates them), so this file calls statx through syscall(2) and includes no
// <sys/stat.h>, whose struct statx would clash with the kernel header's.
#include "device/direct_io.h"

#include <fcntl.h>
#include <linux/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace iogate {

namespace {

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

struct MagicName {
  uint32_t magic;
  const char* name;
};

// From <linux/magic.h>, plus the out-of-tree file systems that matter for storage (zfs, gpfs,
// lustre, beegfs) as coreutils' stat(1) knows them. Literal values: the build host's headers may
// be older than the kernels this runs on.
constexpr MagicName kMagics[] = {
    {0x01021994, "tmpfs"},      {0x858458f6, "ramfs"},     {0x958458f6, "hugetlbfs"}, {0x0000ef53, "ext4"},
    {0x58465342, "xfs"},        {0x9123683e, "btrfs"},     {0xf2f52010, "f2fs"},      {0x2fc12fc1, "zfs"},
    {0xca451a4e, "bcachefs"},   {0x794c7630, "overlay"},   {0x65735546, "fuse"},      {0x61756673, "aufs"},
    {0x73717368, "squashfs"},   {0xe0f5e1e2, "erofs"},     {0x28cd3d45, "cramfs"},    {0x00009660, "iso9660"},
    {0x15013346, "udf"},        {0x00004d44, "vfat"},      {0x2011bab0, "exfat"},     {0x5346544e, "ntfs"},
    {0x7366746e, "ntfs3"},      {0x3153464a, "jfs"},       {0x52654973, "reiserfs"},  {0x00003434, "nilfs2"},
    {0x5a4f4653, "zonefs"},     {0x00006969, "nfs"},       {0x01021997, "9p"},        {0x00c36400, "ceph"},
    {0xff534d42, "cifs"},       {0xfe534d42, "smb2"},      {0x0000517b, "smb"},       {0x47504653, "gpfs"},
    {0x0bd00bd0, "lustre"},     {0x19830326, "beegfs"},    {0x01161970, "gfs2"},      {0x7461636f, "ocfs2"},
    {0x5346414f, "afs"},        {0x6b414653, "afs"},       {0x786f4256, "vboxsf"},    {0x0000f15f, "ecryptfs"},
    {0x00c0ffee, "hostfs"},     {0x00009fa0, "proc"},      {0x62656572, "sysfs"},     {0x00001cd1, "devpts"},
    {0x27e0eb, "cgroup"},       {0x63677270, "cgroup2"},   {0x64626720, "debugfs"},   {0x74726163, "tracefs"},
    {0x73636673, "securityfs"}, {0xcafe4a11, "bpf"},       {0x6e736673, "nsfs"},      {0x62656570, "configfs"},
    {0x19800202, "mqueue"},     {0xde5e81e4, "efivarfs"},  {0x6165676c, "pstore"},    {0x42494e4d, "binfmt_misc"},
    {0x00000187, "autofs"},     {0x50495045, "pipefs"},    {0x534f434b, "sockfs"},    {0x09041934, "anon_inode"},
    {0x62646576, "bdev"},       {0xf97cff8c, "selinuxfs"},
};

constexpr uint32_t kTmpfs = 0x01021994, kRamfs = 0x858458f6, kHugetlbfs = 0x958458f6;

// f_type is a signed long: a magic above 0x7fffffff arrives negative where long is 32 bits
// (and from callers that went through int), so a sign-extended 32-bit value is taken as that magic.
bool as_magic(int64_t f_type, uint32_t* magic) {
  if (f_type < INT32_MIN || f_type > int64_t{UINT32_MAX}) return false;
  *magic = static_cast<uint32_t>(f_type);
  return true;
}

}  // namespace

DirectIoAlignment query_direct_io_alignment(int fd) {
  DirectIoAlignment a;
#ifdef SYS_statx
  struct statx stx;
  std::memset(&stx, 0, sizeof stx);
  if (::syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return a;  // ENOSYS before 4.11, EBADF
  if (!(stx.stx_mask & STATX_DIOALIGN)) return a;  // kernel before 6.1, or the fs does not say
  a.known = true;
  a.mem_align = stx.stx_dio_mem_align;
  a.offset_align = stx.stx_dio_offset_align;
#else
  (void)fd;
#endif
  return a;
}

std::string fs_type_from_statfs_magic(int64_t f_type) {
  uint32_t magic = 0;
  if (as_magic(f_type, &magic)) {
    for (const MagicName& m : kMagics) {
      if (m.magic == magic) return m.name;
    }
    return fmt::format("unknown({:#x})", magic);
  }
  return fmt::format("unknown({:#x})", static_cast<uint64_t>(f_type));
}

Result<int64_t> statfs_magic(int fd) {
  struct statfs st;
  if (::fstatfs(fd, &st) != 0) {
    int err = errno;
    Error e = runtime_error(fmt::format("fstatfs: {}", std::strerror(err)));
    e.os_errno = err;
    return e;
  }
  return static_cast<int64_t>(st.f_type);
}

bool is_memory_fs_magic(int64_t f_type) {
  uint32_t magic = 0;
  if (!as_magic(f_type, &magic)) return false;
  return magic == kTmpfs || magic == kRamfs || magic == kHugetlbfs;
}

}  // namespace iogate
