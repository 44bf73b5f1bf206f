// What a path really is stored on: its mount, the tree of block devices below it down to the
// physical leaves, and the class of the whole.
//
// Read only from /proc and /sys (no privileges). A mount's MAJ:MIN leads into
// /sys/dev/block; partitions lead to their disk, dm and md devices to their slaves, loop devices
// to the stack of their backing file; overlay follows its upperdir and btrfs lists its devices.
// The volume's class is its leaves' common class, or `mixed` with the slowest leaf named,
// because that leaf sets the pace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "device/device_class.h"
#include "device/mountinfo.h"
#include "device/network_fs.h"

namespace iogate {

// What a node of the stack is. stack_node_kind_text gives the report's word: "disk", "partition",
// "lvm", "dm-crypt", "dm-multipath", "dm-linear", "md-<level>" ("md-raid1"), "loop", "file", "ram".
enum class StackNodeKind { kDisk, kPartition, kLvm, kDmCrypt, kDmMultipath, kDmLinear, kMd, kLoop, kFile, kRam };

struct StackNode {
  std::string name;  // kernel name ("nvme0n1p1", "dm-0", "md0", "loop0"), or a path for kFile
  StackNodeKind kind = StackNodeKind::kDisk;
  std::string md_level;  // kMd: md/level ("raid1"), "raid" when the kernel does not say
  DeviceClass device_class = DeviceClass::kUnknown;
  std::string reason;  // for leaves: which attribute decided
  std::string model, vendor, transport;
  bool rotational = false;
  bool removable = false;
  uint64_t size_bytes = 0;
  uint32_t logical_block_size = 0, physical_block_size = 0, nr_requests = 0;
  std::string scheduler;     // the active one: "[mq-deadline]" of "mq-deadline kyber [none]" → "none"
  std::string dm_name;       // dm/name, e.g. "vg0-data"
  std::string backing_file;  // loop: loop/backing_file
  std::vector<StackNode> children;
};

struct StorageStack {
  std::string path;  // as resolved (canonical, or lexical under --root)
  MountEntry mount;
  DeviceClass device_class = DeviceClass::kUnknown;
  std::string reason;
  std::string slowest_leaf;  // "" when there is no block device
  std::vector<std::string> overlay_lowerdirs;
  std::vector<StackNode> stack;         // the mount's device(s); empty for network and memory fs
  std::optional<NetworkMount> network;  // a network or FUSE mount: backend, servers, export, options
};

struct DetectOptions {
  // The root of the /proc and /sys to read, like lsblk --sysroot: "/" normally, "/host" in a
  // container that mounts the host's root, a captured tree in tests. Under a root other than
  // "/", paths are resolved lexically against that tree's mount table and need not exist here.
  std::string root = "/";
};

Result<StorageStack> detect_storage_stack(const std::string& path, const DetectOptions& options = {});

// --root's check, for every mode that takes it: "/" or a tree with a mount table
// (ROOT/proc/1/mountinfo or ROOT/proc/self/mountinfo). A usage error naming the flag otherwise,
// so that a mistyped root fails at once rather than as storage class "unknown".
Status check_root_flag(const std::string& root);

std::string stack_node_kind_text(const StackNode& n);

// "mq-deadline kyber [none]" → "none"; a single word is returned as it is.
std::string active_scheduler(const std::string& text);

}  // namespace iogate
