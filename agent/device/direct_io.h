// What O_DIRECT means for an open file, and which file system it is on.
//
// A benchmark that asks for O_DIRECT must use buffers and offsets the file system accepts, and
// must know when "direct" I/O still lands in memory: tmpfs accepts O_DIRECT (since 6.6) and reads
// there run at memory speed, which says nothing about storage.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace iogate {

// O_DIRECT alignment of an open file from statx(STATX_DIOALIGN), which kernels since 6.1 fill in
// for file systems and block devices that know it (ext4, xfs, f2fs, btrfs since 6.x, bdevs).
struct DirectIoAlignment {
  uint32_t mem_align = 0;     // buffer address alignment
  uint32_t offset_align = 0;  // file offset and length alignment
  bool known = false;         // false: the kernel or fs does not say; fall back on the logical block size
};
// offset_align == 0 with known == true means the fs does not support O_DIRECT for this file
// (an inline-data or encrypted-without-support ext4 file, a DAX-less special file...).
DirectIoAlignment query_direct_io_alignment(int fd);

// The file system of an open file by its statfs f_type, named as mountinfo names it where one
// magic is one type: "tmpfs", "ramfs", "ext4" (one magic for ext2/3/4), "xfs", "btrfs", "nfs",
// "overlay", "hugetlbfs", "9p", "ceph", "cifs", "smb2", "zfs", "f2fs", "squashfs", ...
// FUSE file systems all report "fuse": virtiofs, s3fs, gcsfuse, fuseblk (ntfs-3g) are told apart
// only by mountinfo's fs_type. Anything else is "unknown(0x...)".
std::string fs_type_from_statfs_magic(int64_t f_type);

// fstatfs(fd).f_type; the error carries errno.
Result<int64_t> statfs_magic(int fd);

// tmpfs, ramfs, hugetlbfs: file data lives in memory, so reads run at page-cache speed whatever
// O_DIRECT says. (devtmpfs reports the tmpfs magic, which is right: it is memory too.)
bool is_memory_fs_magic(int64_t f_type);

}  // namespace iogate
