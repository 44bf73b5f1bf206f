// The mount table as the kernel sees it for this process: /proc/self/mountinfo
// (Documentation/filesystems/proc.rst, "3.5 /proc/<pid>/mountinfo").
//
// mountinfo rather than /proc/mounts because only mountinfo gives the device as MAJ:MIN of the
// superblock, the root of a bind mount within its file system, and the propagation fields; and
// it reflects this process's mount namespace, which in a pod is the container's view.
//
// A line is
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   (1)(2) (3)  (4)   (5)      (6)       (7)  (8) (9)    (10)         (11)
// with zero or more optional fields (7) closed by a lone "-" (8). Fields are separated by single
// spaces; the kernel escapes space, tab, newline and backslash inside them as \040 \011 \012 \134,
// and a field may be empty (a tmpfs mounted with an empty source name shows two spaces).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace iogate {

struct MountEntry {
  int mount_id = 0, parent_id = 0;
  // From the MAJ:MIN field, not from stat(2)'s st_dev: for btrfs st_dev is a per-subvolume
  // anonymous device and for overlay one of its own, so only this field matches what the
  // superblock reports; it is still 0:N (no block device) for btrfs, overlay, tmpfs, nfs, fuse.
  uint32_t major = 0, minor = 0;
  std::string root;           // root of the mount within its fs: "/" or a bind source / btrfs subvol "/@home"
  std::string mount_point;    // unescaped
  std::string mount_options;  // per-mount options, e.g. "rw,relatime"
  std::vector<std::string> optional_fields;  // "shared:1", "master:2", "propagate_from:3", "unbindable"
  std::string fs_type;                       // e.g. "ext4", "fuse.s3fs" (type.subtype for fuse)
  std::string source;                        // unescaped, e.g. "/dev/vda", "overlay", "server:/export"
  std::string super_options;                 // per-superblock options, e.g. "rw,errors=remount-ro"

  // "ro" in either option list: a bind mount may be read-only over a writable superblock, and a
  // superblock may be read-only (errors=remount-ro fired) under a mount that still says "rw".
  bool read_only() const;
};

// Skips lines that do not parse (too few fields, no "-" separator, non-numeric ids or device),
// so one odd line from a future kernel does not hide the rest of the table.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

// Reads <proc_root>/self/mountinfo.
Result<std::vector<MountEntry>> read_mountinfo(const std::string& proc_root = "/proc");

// The mount that holds canonical_path (absolute, symlinks resolved, e.g. by realpath): the longest
// mount_point that is a prefix of it on a path-component boundary ("/data" holds "/data/x" but not
// "/database"). Where several entries share the mount point (over-mounts), the LAST one in the file
// wins: the kernel lists mounts in the order they were made, and the newest hides the older ones.
// Null only when nothing matches (no "/" entry, or a relative path).
const MountEntry* find_mount_for_path(const std::vector<MountEntry>& mounts, std::string_view canonical_path);

}  // namespace iogate
