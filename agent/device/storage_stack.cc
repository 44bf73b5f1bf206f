#include "device/storage_stack.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <set>

#include <fmt/format.h>

#include "base/paths.h"
#include "base/split_list.h"
#include "base/trim.h"
#include "device/block_device.h"
#include "device/classify_disk.h"
#include "device/kernel_file.h"

namespace iogate {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 16;

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

std::string read_text(const fs::path& p) {
  auto t = read_kernel_file(p.string());
  return t.ok() ? std::string(trim_space(*t)) : "";
}

uint64_t read_uint(const fs::path& p, uint64_t fallback = 0) {
  auto v = read_kernel_uint(p.string());
  return v.ok() ? *v : fallback;
}

std::string link_basename(const fs::path& link) {
  auto t = resolve_sysfs_link(link.string());
  return t.ok() ? fs::path(*t).filename().string() : "";
}

// "nfs4 mount of fs1:/home: nfs 4.2 from fs1, a network file system".
std::string network_reason(const MountEntry& m, const NetworkMount& n) {
  std::string what(network_backend_name(n.backend));
  if (!n.options.version.empty()) what += " " + n.options.version;
  for (size_t i = 0; i < n.servers.size(); ++i) what += (i ? "," : " from ") + n.servers[i];
  return fmt::format("{} mount of {}: {}, {}", m.fs_type, m.source, what, network_backend_kind(n.backend));
}

bool is_memory_fs(const std::string& t) { return t == "tmpfs" || t == "ramfs" || t == "hugetlbfs" || t == "devtmpfs"; }

// "lowerdir=/a:/b,upperdir=/c,workdir=/d" → the value of key.
std::string option_value(const std::string& options, const std::string& key) {
  for (std::string_view opt : split_list(options)) {
    if (opt.rfind(key + "=", 0) == 0) return std::string(opt.substr(key.size() + 1));
  }
  return "";
}

// The mount table to read under ROOT: the host's init's (proc/1) where another root has it, as
// its proc/self may be a container's view; this process's own under "/".
fs::path mount_table_under(const std::string& root) {
  const fs::path proc = proc_under(root);
  if (root != "/" && path_exists(proc / "1" / "mountinfo")) return proc / "1" / "mountinfo";
  return proc / "self" / "mountinfo";
}

class StackWalker {
 public:
  StackWalker(const DetectOptions& o) : root_(o.root), sys_(sys_under(o.root)) {}

  Status load_mounts() {
    const std::string table = mount_table_under(root_).string();
    auto text = read_kernel_file(table);
    if (!text.ok()) return text.error();
    mounts_ = parse_mountinfo(*text);
    if (mounts_.empty()) return runtime_error(fmt::format("no mounts in {}", table));
    return ok_status();
  }

  // PATH as the mount table sees it: canonical on this machine, lexical under another root.
  Result<std::string> resolve(const std::string& path, bool must_exist) const {
    if (root_ == "/") {
      char buf[PATH_MAX];
      if (realpath(path.c_str(), buf)) return std::string(buf);
      if (must_exist) return usage_error(fmt::format("PATH: {}: {}", path, std::strerror(errno)));
    }
    fs::path p(path);
    if (!p.is_absolute()) {
      if (root_ != "/") return usage_error(fmt::format("PATH: {} must be absolute with --root", path));
      p = fs::current_path() / p;
    }
    std::string s = p.lexically_normal().string();
    return strip_trailing_slashes(s);
  }

  Result<StorageStack> detect(const std::string& path, int depth) {
    if (depth > kMaxDepth)
      return runtime_error(fmt::format("{}: storage stack deeper than {} levels", path, kMaxDepth));
    StorageStack out;
    out.path = path;
    const MountEntry* m = find_mount_for_path(mounts_, path);
    if (!m) return runtime_error(fmt::format("{}: no mount holds it", path));
    out.mount = *m;
    const std::string& t = m->fs_type;
    if ((out.network = describe_network_mount(*m))) {
      out.device_class = DeviceClass::kNetworkFs;
      out.reason = network_reason(*m, *out.network);
      return out;
    }
    if (is_memory_fs(t)) {
      out.device_class = DeviceClass::kRam;
      out.reason = fmt::format("{}: the file system lives in memory", t);
      return out;
    }
    if (t == "overlay") return detect_overlay(out, depth);
    if (m->major == 0) {
      if (t == "btrfs") return detect_btrfs(out, depth);
      out.reason = fmt::format("{} on {}: no block device behind it", t, m->source);
      return out;
    }
    auto dir =
        resolve_sysfs_link((fs::path(sys_) / "dev" / "block" / fmt::format("{}:{}", m->major, m->minor)).string());
    if (!dir.ok()) {
      out.reason = fmt::format("{} on {}: {}", t, m->source, dir.error().message);
      return out;
    }
    out.stack.push_back(walk(*dir, depth + 1));
    summarise(out);
    return out;
  }

  // A block device named directly (`iogate detect /dev/nvme0n1`): its own stack, not /dev's.
  Result<StorageStack> detect_block_device(const std::string& path, uint32_t major, uint32_t minor) {
    StorageStack out;
    out.path = path;
    auto dir = resolve_sysfs_link((fs::path(sys_) / "dev" / "block" / fmt::format("{}:{}", major, minor)).string());
    if (!dir.ok()) return dir.error();
    out.stack.push_back(walk(*dir, 1));
    summarise(out);
    return out;
  }

 private:
  Result<StorageStack> detect_overlay(StorageStack& out, int depth) {
    std::string upper = option_value(out.mount.super_options, "upperdir");
    std::string lower = option_value(out.mount.super_options, "lowerdir");
    for (size_t s = 0; !lower.empty();) {
      size_t colon = lower.find(':', s);
      out.overlay_lowerdirs.push_back(lower.substr(s, colon == std::string::npos ? std::string::npos : colon - s));
      if (colon == std::string::npos) break;
      s = colon + 1;
    }
    std::string below = !upper.empty() ? upper : (out.overlay_lowerdirs.empty() ? "" : out.overlay_lowerdirs.front());
    if (below.empty()) {
      out.reason = "overlay without upperdir or lowerdir options";
      return out;
    }
    if (Status seen = host_path_visible(below); !seen.ok()) {
      out.reason = fmt::format("overlay: {}", seen.error().message);
      return std::move(out);
    }
    auto where = resolve(below, false);
    if (!where.ok()) return where.error();
    auto inner = detect(*where, depth + 1);
    if (!inner.ok()) return inner.error();
    out.stack = inner->stack;
    out.device_class = inner->device_class;
    out.slowest_leaf = inner->slowest_leaf;
    out.reason = fmt::format("overlay: {} {} is on {} ({}): {}", upper.empty() ? "lowerdir" : "upperdir", below,
                             inner->mount.source, inner->mount.fs_type, inner->reason);
    return std::move(out);
  }

  Result<StorageStack> detect_btrfs(StorageStack& out, int depth) {
    const std::string dev = fs::path(out.mount.source).filename().string();
    std::error_code ec;
    for (const auto& uuid : fs::directory_iterator(fs::path(sys_) / "fs" / "btrfs", ec)) {
      fs::path devices = uuid.path() / "devices";
      if (!path_exists(devices / dev)) continue;
      for (const auto& d : fs::directory_iterator(devices, ec)) {
        auto dir = resolve_sysfs_link(d.path().string());
        if (dir.ok()) out.stack.push_back(walk(*dir, depth + 1));
      }
      break;
    }
    if (out.stack.empty()) {
      out.reason = fmt::format("btrfs on {}: its devices are not listed under /sys/fs/btrfs", out.mount.source);
      return std::move(out);
    }
    summarise(out);
    out.reason =
        fmt::format("btrfs over {} device{}: {}", out.stack.size(), out.stack.size() == 1 ? "" : "s", out.reason);
    return std::move(out);
  }

  // A node for the device whose sysfs directory is `dir`, with everything below it.
  StackNode walk(const std::string& dir_text, int depth) {
    fs::path dir(dir_text);
    StackNode n;
    n.name = dir.filename().string();
    if (depth > kMaxDepth || !visited_.insert(dir_text).second) {
      n.kind = StackNodeKind::kDisk;
      n.reason = fmt::format("{}: cycle or stack deeper than {} levels; not followed", n.name, kMaxDepth);
      return n;
    }
    const bool partition = path_exists(dir / "partition");
    fs::path disk = partition ? dir.parent_path() : dir;
    n.size_bytes = read_uint(dir / "size") * 512;
    fill_queue(disk, n);
    n.removable = read_uint(disk / "removable") != 0;
    if (partition) {
      n.kind = StackNodeKind::kPartition;
      n.children.push_back(walk(disk.string(), depth + 1));
      // A partition is on its disk's bus, as lsblk shows TRAN for both.
      n.transport = n.children.front().transport;
    } else if (n.name.rfind("dm-", 0) == 0) {
      std::string uuid = read_text(dir / "dm" / "uuid");
      n.dm_name = read_text(dir / "dm" / "name");
      n.kind = uuid.rfind("LVM-", 0) == 0     ? StackNodeKind::kLvm
               : uuid.rfind("CRYPT-", 0) == 0 ? StackNodeKind::kDmCrypt
               : uuid.rfind("mpath-", 0) == 0 ? StackNodeKind::kDmMultipath
                                              : StackNodeKind::kDmLinear;
      walk_slaves(dir, depth, n);
    } else if (n.name.rfind("md", 0) == 0 && path_exists(dir / "md")) {
      std::string level = read_text(dir / "md" / "level");
      n.kind = StackNodeKind::kMd;
      n.md_level = level.empty() ? std::string("raid") : level;
      walk_slaves(dir, depth, n);
    } else if (n.name.rfind("loop", 0) == 0) {
      n.kind = StackNodeKind::kLoop;
      n.backing_file = read_text(dir / "loop" / "backing_file");
      if (!n.backing_file.empty()) n.children.push_back(walk_file(n.backing_file, depth + 1));
    } else {
      n.kind = n.name.rfind("zram", 0) == 0 || n.name.rfind("ram", 0) == 0 ? StackNodeKind::kRam : StackNodeKind::kDisk;
      DiskFacts f;
      f.name = n.name;
      f.sysfs_path = dir_text;
      auto dev = resolve_sysfs_link((dir / "device").string());
      fs::path devdir = dev.ok() ? fs::path(*dev) : fs::path();
      if (!devdir.empty()) {
        f.model = read_text(devdir / "model");
        f.vendor = read_text(devdir / "vendor");
        f.driver = link_basename(devdir / "driver");
        f.nvme_transport = read_text(devdir / "transport");
        if (f.nvme_transport.empty() && n.name.rfind("nvme", 0) == 0) f.nvme_transport = controller_transport(devdir);
        f.sysfs_path = devdir.string() + "|" + dir_text;
      }
      f.rotational = n.rotational;
      f.transport = transport_from_path(n.name, f.sysfs_path, f.driver);
      if (f.transport == "nvme" && !f.nvme_transport.empty() && f.nvme_transport != "pcie")
        f.transport = f.nvme_transport;
      DiskClassification c = classify_disk(f);
      n.device_class = c.device_class;
      n.reason = c.reason;
      n.model = f.model;
      n.vendor = f.vendor;
      n.transport = f.transport;
      return n;
    }
    aggregate(n);
    return n;
  }

  // Native NVMe multipath: the namespace's device is the subsystem; its controllers carry transport.
  std::string controller_transport(const fs::path& subsystem) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(subsystem, ec)) {
      std::string t = read_text(e.path() / "transport");
      if (!t.empty()) return t;
    }
    return "";
  }

  void walk_slaves(const fs::path& dir, int depth, StackNode& n) {
    std::error_code ec;
    std::vector<fs::path> slaves;
    for (const auto& s : fs::directory_iterator(dir / "slaves", ec)) slaves.push_back(s.path());
    std::sort(slaves.begin(), slaves.end());
    for (const fs::path& s : slaves) {
      auto target = resolve_sysfs_link(s.string());
      if (target.ok()) n.children.push_back(walk(*target, depth + 1));
    }
  }

  // A path the kernel recorded in another mount namespace (a loop device's backing file, an
  // overlay's upperdir) is the host's when iogate runs in a container: looked up in the
  // container's own mount table it would land on the container's root and be classed as that.
  // Under "/" it is followed only if it exists here; under --root, the host's table has it.
  Status host_path_visible(const std::string& path) const {
    if (root_ != "/" || path_exists(path)) return ok_status();
    return runtime_error(fmt::format(
        "{} is not in this mount namespace (iogate in a container?): mount the host's /proc and /sys at /host "
        "and pass --root /host to follow it",
        path));
  }

  // A loop device's backing file: a node of kind "file" over the stack of the fs that holds it.
  StackNode walk_file(const std::string& file, int depth) {
    StackNode n;
    n.kind = StackNodeKind::kFile;
    n.name = file;
    if (Status seen = host_path_visible(file); !seen.ok()) {
      n.reason = seen.error().message;
      return n;
    }
    auto where = resolve(file, false);
    auto inner = where.ok() ? detect(*where, depth + 1) : Result<StorageStack>(where.error());
    if (!inner.ok()) {
      n.reason = inner.error().message;
      return n;
    }
    n.children = inner->stack;
    n.device_class = inner->device_class;
    n.reason =
        fmt::format("backing file on {} ({}): {}", inner->mount.mount_point, inner->mount.fs_type, inner->reason);
    return n;
  }

  void fill_queue(const fs::path& disk, StackNode& n) {
    const fs::path q = disk / "queue";
    n.rotational = read_uint(q / "rotational") != 0;
    n.logical_block_size = static_cast<uint32_t>(read_uint(q / "logical_block_size", 512));
    n.physical_block_size = static_cast<uint32_t>(read_uint(q / "physical_block_size", n.logical_block_size));
    n.nr_requests = static_cast<uint32_t>(read_uint(q / "nr_requests"));
    n.scheduler = active_scheduler(read_text(q / "scheduler"));
  }

  // An inner node's class: its leaves' common class, else mixed.
  static void aggregate(StackNode& n) {
    if (n.kind == StackNodeKind::kFile) return;
    std::vector<const StackNode*> leaves;
    collect_leaves(n, leaves);
    if (leaves.empty()) {
      if (n.reason.empty()) n.reason = fmt::format("{}: {} with nothing below it", n.name, stack_node_kind_text(n));
      return;
    }
    DeviceClass c = leaves.front()->device_class;
    for (const StackNode* l : leaves) {
      if (l->device_class != c) c = DeviceClass::kMixed;
    }
    n.device_class = c;
  }

  static void collect_leaves(const StackNode& n, std::vector<const StackNode*>& out) {
    if (n.children.empty()) {
      out.push_back(&n);
      return;
    }
    for (const StackNode& c : n.children) {
      if (c.kind == StackNodeKind::kFile) {
        // A backing file stands for the stack beneath it; its class is already that stack's.
        if (c.children.empty()) out.push_back(&c);
        else collect_leaves(c, out);
      } else {
        collect_leaves(c, out);
      }
    }
  }

  static void summarise(StorageStack& out) {
    std::vector<const StackNode*> leaves;
    for (const StackNode& n : out.stack) {
      if (n.children.empty()) leaves.push_back(&n);
      else collect_leaves(n, leaves);
    }
    if (leaves.empty()) return;
    const StackNode* slowest = leaves.front();
    DeviceClass c = slowest->device_class;
    for (const StackNode* l : leaves) {
      if (device_class_slowness(l->device_class) > device_class_slowness(slowest->device_class)) slowest = l;
      if (l->device_class != c) c = DeviceClass::kMixed;
    }
    out.device_class = c;
    out.slowest_leaf = slowest->name;
    if (c == DeviceClass::kMixed) {
      std::string names;
      for (const StackNode* l : leaves) {
        names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", l->name, device_class_name(l->device_class));
      }
      out.reason = fmt::format("leaves of different classes: {}; the slowest, {}, sets the pace: {}", names,
                               slowest->name, slowest->reason);
    } else if (out.stack.size() == 1 && !out.stack.front().children.empty()) {
      // Say how the mount reaches its leaf: "dm-0 (lvm) → nvme0n1p2 (partition) → nvme0n1: …".
      std::string chain;
      for (const StackNode* n = &out.stack.front(); !n->children.empty(); n = &n->children.front()) {
        chain += fmt::format("{} ({}) → ", n->name, stack_node_kind_text(*n));
      }
      out.reason = chain + slowest->reason;
    } else {
      out.reason = slowest->reason;
    }
  }

  std::string root_, sys_;
  std::vector<MountEntry> mounts_;
  std::set<std::string> visited_;
};

}  // namespace

std::string active_scheduler(const std::string& text) {
  size_t open = text.find('[');
  size_t close = text.find(']');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    return text.substr(open + 1, close - open - 1);
  }
  return text;
}

Status check_root_flag(const std::string& root) {
  if (root == "/" || path_exists(mount_table_under(root))) return ok_status();
  return usage_error(
      fmt::format("--root: {} holds no proc/1/mountinfo or proc/self/mountinfo: mount the host's /proc "
                  "and /sys there (e.g. at /host/proc and /host/sys for --root /host)",
                  root));
}

std::string stack_node_kind_text(const StackNode& n) {
  switch (n.kind) {
    case StackNodeKind::kDisk: return "disk";
    case StackNodeKind::kPartition: return "partition";
    case StackNodeKind::kLvm: return "lvm";
    case StackNodeKind::kDmCrypt: return "dm-crypt";
    case StackNodeKind::kDmMultipath: return "dm-multipath";
    case StackNodeKind::kDmLinear: return "dm-linear";
    case StackNodeKind::kMd: return "md-" + n.md_level;
    case StackNodeKind::kLoop: return "loop";
    case StackNodeKind::kFile: return "file";
    case StackNodeKind::kRam: return "ram";
  }
  return "disk";
}

Result<StorageStack> detect_storage_stack(const std::string& path, const DetectOptions& options) {
  StackWalker walker(options);
  if (Status s = walker.load_mounts(); !s.ok()) return s.error();
  auto where = walker.resolve(path, true);
  if (!where.ok()) return where.error();
  struct stat st;
  if (options.root == "/" && stat(where->c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    return walker.detect_block_device(*where, major(st.st_rdev), minor(st.st_rdev));
  }
  return walker.detect(*where, 0);
}

}  // namespace iogate
