// What a network or FUSE mount is, read from its mount table entry alone: which backend serves
// it (NFS, SMB, CephFS, Lustre, an S3 or GCS FUSE program, ...), which server(s) the source or
// options name, what of the server is mounted, and the client options that shape data loading
// (NFS version, transport, nconnect, rsize/wsize, hard/soft, attribute caching; FUSE max_read,
// allow_other).
//
// A pure function of the MountEntry: no lookup, no I/O, so a captured mountinfo line is enough to
// test it. What the entry does not say stays empty: s3fs and mount-s3 do not put their bucket in
// the mount table, beegfs names its servers only in its client config, a FUSE program may name
// its source as it likes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/mountinfo.h"

namespace iogate {

// network_backend_name gives the report's word: "nfs", "smb", "cephfs", "ceph-fuse", "lustre",
// "glusterfs", "wekafs", "beegfs", "gpfs", "9p", "virtiofs", "s3fs", "mountpoint-s3", "gcsfuse",
// "juicefs", "seaweedfs", "rclone", "sshfs", "goofys", "blobfuse2", "fuse" (another FUSE program),
// "other" (another kernel network file system: afs, orangefs, ocfs2).
enum class NetworkBackend {
  kNfs,
  kSmb,
  kCephFs,    // the kernel client
  kCephFuse,  // ceph-fuse: the same cluster through FUSE, with its own caching and limits
  kLustre,
  kGlusterFs,
  kWekaFs,
  kBeeGfs,
  kGpfs,  // IBM Storage Scale (Spectrum Scale)
  k9p,
  kVirtiofs,
  kS3fs,
  kMountpointS3,  // Mountpoint for Amazon S3 (mount-s3)
  kGcsfuse,
  kJuiceFs,
  kSeaweedFs,
  kRclone,
  kSshfs,
  kGoofys,
  kBlobfuse2,
  kOtherFuse,
  kOther,
};

std::string_view network_backend_name(NetworkBackend b);
// What the backend is, for a reason: "a network file system", "a parallel file system", "an object
// store through FUSE", "a distributed file system through FUSE", "remote files through FUSE",
// "a host-shared file system", "a FUSE file system".
std::string_view network_backend_kind(NetworkBackend b);

struct NetworkMountOptions {
  std::string version;    // NFS "3", "4.1", "4.2" (vers=, or vers=4 with minorversion=); SMB "3.1.1"
  std::string proto;      // NFS transport: "tcp", "tcp6", "rdma", "udp"
  uint32_t nconnect = 0;  // NFS connections to the server; 0 where not given (one)
  uint64_t rsize_bytes = 0, wsize_bytes = 0;  // largest READ/WRITE on the wire; 0 where not given
  std::string hard_soft;                      // "hard", "soft" or "softerr" as given; "" where neither
  // Attribute caching as given: "noac", "actimeo=N", "acregmin=N", "acregmax=N", "acdirmin=N",
  // "acdirmax=N", "nocto"; empty = the client's defaults (the kernel prints only what differs).
  std::vector<std::string> attr_cache;
  uint64_t max_read_bytes = 0;  // FUSE: the kernel's cap on one READ to the daemon; 0 where not given
  bool allow_other = false;     // FUSE: users other than the mounter may use it
};

struct NetworkMount {
  NetworkBackend backend = NetworkBackend::kOtherFuse;
  // Hosts or addresses as the entry names them: NFS and SMB server, Lustre MGS NIDs
  // ("10.0.0.1@tcp"), Ceph monitors ("10.0.0.1:6789"), sshfs and GlusterFS host, WekaFS backends,
  // SeaweedFS filer ("localhost:8888"). Empty where the entry does not say.
  std::vector<std::string> servers;
  // The path within the remote side that is mounted: NFS export, SMB share path ("share/dir"),
  // CephFS path, Lustre subdirectory ("/" for the whole fs), sshfs and rclone remote path,
  // SeaweedFS filer path.
  std::string export_path;
  // The named file system or bucket: Lustre fsname, CephFS name, GlusterFS volume, WekaFS and GPFS
  // file system, JuiceFS volume, gcsfuse/goofys bucket, rclone remote, 9p/virtiofs tag.
  std::string volume;
  NetworkMountOptions options;
};

// The description of a network or FUSE mount; none for a local or memory file system.
std::optional<NetworkMount> describe_network_mount(const MountEntry& m);

// One line for people: "nfs 4.2, server fileserver, export /home; proto tcp, nconnect 8, rsize 1 MiB,
// wsize 1 MiB, hard".
std::string network_mount_summary(const NetworkMount& n);

}  // namespace iogate
