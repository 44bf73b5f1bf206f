#include "device/network_fs.h"

#include <charconv>
#include <iterator>

#include <fmt/format.h>

#include "base/split_list.h"
#include "base/units.h"

namespace iogate {

namespace {

using B = NetworkBackend;

struct Name {
  std::string_view text;
  NetworkBackend backend;
};

// Kernel file system types. "cephfs" is not one, but mount tables written by hand use it.
constexpr Name kKernelTypes[] = {
    {"nfs", B::kNfs},        {"nfs4", B::kNfs},          {"cifs", B::kSmb},
    {"smb3", B::kSmb},       {"smbfs", B::kSmb},         {"ceph", B::kCephFs},
    {"cephfs", B::kCephFs},  {"lustre", B::kLustre},     {"glusterfs", B::kGlusterFs},
    {"wekafs", B::kWekaFs},  {"beegfs", B::kBeeGfs},     {"gpfs", B::kGpfs},
    {"9p", B::k9p},          {"virtiofs", B::kVirtiofs}, {"afs", B::kOther},
    {"orangefs", B::kOther}, {"ocfs2", B::kOther},
};

// FUSE programs by the subtype of "fuse.SUBTYPE", or by the source of a plain "fuse" mount: a
// program that sets no subtype (mount-s3 mounts as type "fuse" with source "mountpoint-s3")
// names itself only there.
constexpr Name kFusePrograms[] = {
    {"s3fs", B::kS3fs},           {"mountpoint-s3", B::kMountpointS3},
    {"gcsfuse", B::kGcsfuse},     {"juicefs", B::kJuiceFs},
    {"seaweedfs", B::kSeaweedFs}, {"rclone", B::kRclone},
    {"sshfs", B::kSshfs},         {"goofys", B::kGoofys},
    {"blobfuse2", B::kBlobfuse2}, {"ceph-fuse", B::kCephFuse},
    {"ceph", B::kCephFuse},       {"glusterfs", B::kGlusterFs},
};

template <size_t N>
std::optional<NetworkBackend> lookup(const Name (&table)[N], std::string_view key) {
  for (const Name& n : table) {
    if (n.text == key) return n.backend;
  }
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<NetworkBackend> backend_of(const MountEntry& m) {
  std::string_view t = m.fs_type;
  if (auto b = lookup(kKernelTypes, t)) return b;
  if (starts_with(t, "fuse.")) return lookup(kFusePrograms, t.substr(5)).value_or(B::kOtherFuse);
  if (t == "fuse" || t == "fuseblk") {
    if (starts_with(m.source, "JuiceFS:")) return B::kJuiceFs;
    return lookup(kFusePrograms, m.source).value_or(B::kOtherFuse);
  }
  return std::nullopt;
}

// Both option lists: the super options carry the file system's own (vers=, max_read=), the
// per-mount list the VFS flags; a key is looked up in the super options first.
class Options {
 public:
  explicit Options(const MountEntry& m) {
    for (std::string_view o : split_list(m.super_options)) items_.push_back(o);
    for (std::string_view o : split_list(m.mount_options)) items_.push_back(o);
  }
  bool has(std::string_view flag) const {
    for (std::string_view o : items_) {
      if (o == flag) return true;
    }
    return false;
  }
  std::optional<std::string_view> value(std::string_view key) const {
    for (std::string_view o : items_) {
      if (o.size() > key.size() && starts_with(o, key) && o[key.size()] == '=') return o.substr(key.size() + 1);
    }
    return std::nullopt;
  }
  uint64_t number(std::string_view key) const {
    auto v = value(key);
    uint64_t n = 0;
    if (!v) return 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    return ec == std::errc() && ptr == v->data() + v->size() ? n : 0;
  }
  const std::vector<std::string_view>& items() const { return items_; }

 private:
  std::vector<std::string_view> items_;
};

NetworkMountOptions read_options(const Options& o, NetworkBackend b) {
  NetworkMountOptions out;
  std::string vers(o.value("vers").value_or(o.value("nfsvers").value_or("")));
  // Older kernels printed NFSv4.1 as "vers=4,minorversion=1"; "vers=4.0" means 4.0.
  if (b == B::kNfs && vers == "4") {
    if (auto minor = o.value("minorversion")) vers.append(1, '.').append(*minor);
  }
  out.version = vers;
  out.proto = std::string(o.value("proto").value_or(""));
  out.nconnect = static_cast<uint32_t>(o.number("nconnect"));
  out.rsize_bytes = o.number("rsize");
  out.wsize_bytes = o.number("wsize");
  for (std::string_view mode : {"softerr", "soft", "hard"}) {
    if (o.has(mode)) {
      out.hard_soft = std::string(mode);
      break;
    }
  }
  for (std::string_view item : o.items()) {
    for (std::string_view key : {"actimeo=", "acregmin=", "acregmax=", "acdirmin=", "acdirmax="}) {
      if (starts_with(item, key)) out.attr_cache.emplace_back(item);
    }
    if (item == "noac" || item == "nocto") out.attr_cache.emplace_back(item);
  }
  out.max_read_bytes = o.number("max_read");
  out.allow_other = o.has("allow_other");
  return out;
}

std::vector<std::string> split_servers(std::string_view list, std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || separators.find(list[i]) != std::string_view::npos) {
      if (i > start) out.emplace_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// "host:/path", "[fe80::1]:/path", "user@host:path": the host (brackets and user dropped) and
// the path; no colon means no host.
void host_and_path(std::string_view source, NetworkMount& n) {
  if (size_t at = source.find('@'); at != std::string_view::npos && at < source.find(':')) {
    source.remove_prefix(at + 1);
  }
  size_t colon;
  if (starts_with(source, "[")) {
    size_t close = source.find(']');
    if (close == std::string_view::npos) return;
    n.servers.emplace_back(source.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = source.find(':');
    if (colon == std::string_view::npos) {
      n.export_path = std::string(source);
      return;
    }
    if (colon > 0) n.servers.emplace_back(source.substr(0, colon));
  }
  if (colon < source.size() && source[colon] == ':') n.export_path = std::string(source.substr(colon + 1));
}

// Old: "mon1:6789,mon2:6789:/path" (or ":/path", monitors from ceph.conf), file system in
// mds_namespace= or fs=. New (Linux 5.17, mount.ceph of Quincy): "user@fsid.fsname=/path", the
// monitors in mon_addr=, '/'-separated.
void ceph_source(std::string_view source, const Options& o, NetworkMount& n) {
  size_t at = source.find('@'), eq = source.find('=');
  if (at != std::string_view::npos && eq != std::string_view::npos && at < eq) {
    std::string_view cluster = source.substr(at + 1, eq - at - 1);
    size_t dot = cluster.find('.');
    n.volume = std::string(dot == std::string_view::npos ? cluster : cluster.substr(dot + 1));
    n.export_path = std::string(source.substr(eq + 1));
  } else if (size_t path = source.find(":/"); path != std::string_view::npos) {
    n.servers = split_servers(source.substr(0, path), ",");
    n.export_path = std::string(source.substr(path + 1));
    n.volume = std::string(o.value("mds_namespace").value_or(o.value("fs").value_or("")));
  }
  if (n.servers.empty()) {
    if (auto mons = o.value("mon_addr")) n.servers = split_servers(*mons, "/");
  }
}

// "nid1@tcp:nid2@tcp:/fsname/subdir": MGS nodes ':'-separated, one node's NIDs ','-separated.
void lustre_source(std::string_view source, NetworkMount& n) {
  size_t path = source.find(":/");
  if (path == std::string_view::npos) return;
  n.servers = split_servers(source.substr(0, path), ":,");
  std::string_view fs = source.substr(path + 2);
  size_t slash = fs.find('/');
  n.volume = std::string(fs.substr(0, slash));
  n.export_path = slash == std::string_view::npos ? "/" : std::string(fs.substr(slash));
}

// "//server/share/dir" → server, "share/dir".
void smb_source(std::string_view source, NetworkMount& n) {
  while (starts_with(source, "/") || starts_with(source, "\\")) source.remove_prefix(1);
  size_t slash = source.find('/');
  if (slash > 0) n.servers.emplace_back(source.substr(0, slash));
  if (slash != std::string_view::npos) n.export_path = std::string(source.substr(slash + 1));
}

// "remote:path", "remote{hash}:path" (a remote with overrides on the command line or in the
// environment), ":backend,opt=x:path" (an on-the-fly remote), or a local path.
void rclone_source(std::string_view source, NetworkMount& n) {
  size_t colon = source.find(':', starts_with(source, ":") ? 1 : 0);
  if (colon == std::string_view::npos) {
    n.export_path = std::string(source);
    return;
  }
  std::string_view remote = source.substr(0, colon);
  if (size_t brace = remote.find('{'); brace != std::string_view::npos && remote.back() == '}') {
    remote = remote.substr(0, brace);
  }
  n.volume = std::string(remote);
  n.export_path = std::string(source.substr(colon + 1));
}

// "filer:port:/path" (a list of filers is ','-separated). A filer given with its gRPC port,
// "host:port.grpcport" (SeaweedFS's server address form), is named by host:port.
void seaweedfs_source(std::string_view source, NetworkMount& n) {
  size_t path = source.find(":/");
  if (path == std::string_view::npos) return;
  n.servers = split_servers(source.substr(0, path), ",");
  for (std::string& server : n.servers) {
    size_t port = server.rfind(':');
    if (size_t dot = server.find('.', port == std::string::npos ? server.size() : port); dot != std::string::npos)
      server.erase(dot);
  }
  n.export_path = std::string(source.substr(path + 1));
}

void fill_source(const MountEntry& m, const Options& o, NetworkMount& n) {
  std::string_view s = m.source;
  switch (n.backend) {
    case B::kNfs:
    case B::kSshfs: host_and_path(s, n); break;
    case B::kGlusterFs:
      host_and_path(s, n);
      while (starts_with(n.export_path, "/")) n.export_path.erase(0, 1);
      n.volume = std::move(n.export_path);
      n.export_path.clear();
      break;
    case B::kSmb: smb_source(s, n); break;
    case B::kCephFs: ceph_source(s, o, n); break;
    case B::kLustre: lustre_source(s, n); break;
    case B::kRclone: rclone_source(s, n); break;
    case B::kSeaweedFs: seaweedfs_source(s, n); break;
    case B::kWekaFs:
      // "backend1,backend2/fs" for a stateless client, "fs" where the client is already joined.
      if (size_t slash = s.rfind('/'); slash != std::string_view::npos) {
        n.servers = split_servers(s.substr(0, slash), ",");
        n.volume = std::string(s.substr(slash + 1));
      } else {
        n.volume = std::string(s);
      }
      break;
    case B::kGpfs: n.volume = std::string(s.substr(s.rfind('/') + 1)); break;
    case B::k9p:
      // Over TCP the source is the server's address; over virtio or a fd it is a tag.
      if (o.value("trans") == "tcp") n.servers.emplace_back(s);
      else n.volume = std::string(s);
      break;
    case B::kVirtiofs: n.volume = std::string(s); break;
    case B::kJuiceFs:
      if (starts_with(s, "JuiceFS:")) n.volume = std::string(s.substr(8));
      break;
    case B::kGcsfuse: n.volume = std::string(s); break;
    case B::kGoofys: {
      // "bucket" or "bucket:prefix".
      size_t colon = s.find(':');
      n.volume = std::string(s.substr(0, colon));
      if (colon != std::string_view::npos) n.export_path = std::string(s.substr(colon + 1));
      break;
    }
    // The program's own name as the source: nothing to learn from it.
    case B::kS3fs:
    case B::kMountpointS3:
    case B::kBlobfuse2:
    case B::kCephFuse:
    case B::kBeeGfs:
    case B::kOtherFuse:
    case B::kOther: break;
  }
}

// Per backend, in enum order: the report's word, what it is (for the reason), and the word for
// NetworkMount::volume.
struct BackendText {
  NetworkBackend backend;
  std::string_view name, kind, volume_word;
};
constexpr std::string_view kNetFs = "a network file system", kParallel = "a parallel file system",
                           kObject = "an object store through FUSE", kFuseFs = "a distributed file system through FUSE",
                           kRemote = "remote files through FUSE", kHost = "a host-shared file system";
constexpr BackendText kBackendText[] = {
    {B::kNfs, "nfs", kNetFs, "fs"},
    {B::kSmb, "smb", kNetFs, "fs"},
    {B::kCephFs, "cephfs", kParallel, "fs"},
    {B::kCephFuse, "ceph-fuse", kFuseFs, "fs"},
    {B::kLustre, "lustre", kParallel, "fs"},
    {B::kGlusterFs, "glusterfs", kParallel, "volume"},
    {B::kWekaFs, "wekafs", kParallel, "fs"},
    {B::kBeeGfs, "beegfs", kParallel, "fs"},
    {B::kGpfs, "gpfs", kParallel, "fs"},
    {B::k9p, "9p", kHost, "tag"},
    {B::kVirtiofs, "virtiofs", kHost, "tag"},
    {B::kS3fs, "s3fs", kObject, "bucket"},
    {B::kMountpointS3, "mountpoint-s3", kObject, "bucket"},
    {B::kGcsfuse, "gcsfuse", kObject, "bucket"},
    {B::kJuiceFs, "juicefs", kFuseFs, "volume"},
    {B::kSeaweedFs, "seaweedfs", kFuseFs, "volume"},
    {B::kRclone, "rclone", kRemote, "remote"},
    {B::kSshfs, "sshfs", kRemote, "fs"},
    {B::kGoofys, "goofys", kObject, "bucket"},
    {B::kBlobfuse2, "blobfuse2", kObject, "container"},
    {B::kOtherFuse, "fuse", "a FUSE file system", "fs"},
    {B::kOther, "other", kNetFs, "fs"},
};
constexpr bool one_row_per_backend_in_order() {
  for (size_t i = 0; i < std::size(kBackendText); ++i) {
    if (kBackendText[i].backend != static_cast<NetworkBackend>(i)) return false;
  }
  return std::size(kBackendText) == static_cast<size_t>(B::kOther) + 1;
}
static_assert(one_row_per_backend_in_order(), "kBackendText: one row per NetworkBackend, in enum order");

const BackendText& text_of(NetworkBackend b) { return kBackendText[static_cast<size_t>(b)]; }

}  // namespace

std::string_view network_backend_name(NetworkBackend b) { return text_of(b).name; }

std::string_view network_backend_kind(NetworkBackend b) { return text_of(b).kind; }

std::optional<NetworkMount> describe_network_mount(const MountEntry& m) {
  std::optional<NetworkBackend> backend = backend_of(m);
  if (!backend) return std::nullopt;
  NetworkMount n;
  n.backend = *backend;
  Options o(m);
  fill_source(m, o, n);
  n.options = read_options(o, n.backend);
  return n;
}

std::string network_mount_summary(const NetworkMount& n) {
  std::string out(network_backend_name(n.backend));
  const NetworkMountOptions& o = n.options;
  if (!o.version.empty()) out += " " + o.version;
  if (!n.servers.empty()) {
    out += n.servers.size() == 1 ? ", server " : ", servers ";
    for (size_t i = 0; i < n.servers.size(); ++i) out += (i ? "," : "") + n.servers[i];
  }
  if (!n.volume.empty()) out += fmt::format(", {} {}", text_of(n.backend).volume_word, n.volume);
  if (!n.export_path.empty()) out += ", export " + n.export_path;
  std::vector<std::string> opts;
  if (!o.proto.empty()) opts.push_back("proto " + o.proto);
  if (o.nconnect) opts.push_back(fmt::format("nconnect {}", o.nconnect));
  if (o.rsize_bytes) opts.push_back("rsize " + format_bytes(static_cast<double>(o.rsize_bytes)));
  if (o.wsize_bytes) opts.push_back("wsize " + format_bytes(static_cast<double>(o.wsize_bytes)));
  if (!o.hard_soft.empty()) opts.push_back(o.hard_soft);
  for (const std::string& a : o.attr_cache) opts.push_back(a);
  if (o.max_read_bytes) opts.push_back("max_read " + format_bytes(static_cast<double>(o.max_read_bytes)));
  if (o.allow_other) opts.push_back("allow_other");
  for (size_t i = 0; i < opts.size(); ++i) out += (i ? ", " : "; ") + opts[i];
  return out;
}

}  // namespace iogate
