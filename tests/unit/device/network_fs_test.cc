// describe_network_mount on mount table lines as real systems print them. Each line says where it
// comes from; where the source was mount(8) or /proc/mounts output, it is laid out as mountinfo the
// way the kernel splits it (VFS flags such as relatime in the per-mount list, the file system's own
// options in the super options) and the ids and MAJ:MIN are made up.
#include "device/network_fs.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace iogate;

namespace {

NetworkMount describe(const std::string& line) {
  std::vector<MountEntry> m = parse_mountinfo(line + "\n");
  REQUIRE_MESSAGE(m.size() == 1, "the line does not parse: " << line);
  std::optional<NetworkMount> n = describe_network_mount(m[0]);
  REQUIRE_MESSAGE(n.has_value(), "not described as a network mount: " << line);
  return *n;
}

using Strings = std::vector<std::string>;

}  // namespace

// ---- NFS -------------------------------------------------------------------------------------------

TEST_CASE("nfs v3: server, export, soft, rsize/wsize; mountaddr and mountproto are not the transport") {
  // mount(8) on a university cluster's HPC login node (hosts *.css.lan), as posted publicly.
  NetworkMount n = describe(
      "210 28 0:61 / /software/ZZZZ10001 rw,relatime shared:120 - nfs "
      "sw.css.lan:/srv/nfs/export/software/projects/ZZZZ10001 "
      "rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,soft,proto=tcp,timeo=300,retrans=3,sec=sys,"
      "mountaddr=10.7.132.63,mountvers=3,mountport=20048,mountproto=udp,local_lock=none,addr=10.7.132.63");
  CHECK(n.backend == NetworkBackend::kNfs);
  CHECK(network_backend_name(n.backend) == "nfs");
  CHECK(n.servers == Strings{"sw.css.lan"});
  CHECK(n.export_path == "/srv/nfs/export/software/projects/ZZZZ10001");
  CHECK(n.volume == "");
  CHECK(n.options.version == "3");
  CHECK(n.options.proto == "tcp");
  CHECK(n.options.nconnect == 0);
  CHECK(n.options.rsize_bytes == 1048576);
  CHECK(n.options.wsize_bytes == 1048576);
  CHECK(n.options.hard_soft == "soft");
  CHECK(n.options.attr_cache.empty());
  CHECK(network_mount_summary(n) ==
        "nfs 3, server sw.css.lan, export /srv/nfs/export/software/projects/ZZZZ10001; proto tcp, rsize 1.00 MiB, "
        "wsize 1.00 MiB, soft");
}

TEST_CASE("nfs v4.1: Amazon EFS, read-only") {
  // mount(8) in the Wiz "K8s LAN Party" challenge "Exposed File Share" (EFS in us-west-1), as quoted
  // in its public write-ups.
  NetworkMount n = describe(
      "1201 1187 0:250 / /efs ro,relatime - nfs4 fs-0779524599b7d5e7e.efs.us-west-1.amazonaws.com:/ "
      "ro,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,noresvport,proto=tcp,timeo=600,retrans=2,sec=sys,"
      "clientaddr=192.168.57.108,local_lock=none,addr=192.168.124.98");
  CHECK(n.backend == NetworkBackend::kNfs);
  CHECK(n.servers == Strings{"fs-0779524599b7d5e7e.efs.us-west-1.amazonaws.com"});
  CHECK(n.export_path == "/");
  CHECK(n.options.version == "4.1");
  CHECK(n.options.hard_soft == "hard");
}

TEST_CASE("nfs v4.2 with nconnect") {
  // The file system options the dt data test program printed for an NFS share, as posted
  // publicly (mount point and source from the same output).
  NetworkMount n = describe(
      "88 29 0:53 / /mnt/hs_test rw,relatime shared:60 - nfs4 192.168.0.105:/hs_test "
      "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,fatal_neterrors=none,proto=tcp,nconnect=16,"
      "port=20491,timeo=600,retrans=2,sec=sys,clientaddr=192.168.0.106,local_lock=none,addr=192.168.0.105");
  CHECK(n.servers == Strings{"192.168.0.105"});
  CHECK(n.export_path == "/hs_test");
  CHECK(n.options.version == "4.2");
  CHECK(n.options.nconnect == 16);
  CHECK(n.options.proto == "tcp");
}

TEST_CASE("nfs: attribute caching turned off, as the kernel prints it") {
  // The options of a soft NFSv4.2 mount with noac in a linux-nfs mailing list report (server
  // thor04): acregmin..acdirmax=0 and noac, as the kernel prints noac; clientaddr/addr are ours.
  NetworkMount n = describe(
      "95 29 0:60 / /mnt/thor04 rw,relatime,sync shared:70 - nfs4 thor04:/mnt/thorfs04 "
      "rw,sync,vers=4.2,rsize=131072,wsize=131072,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,soft,noac,"
      "proto=tcp,timeo=20,retrans=2,sec=sys,clientaddr=10.0.0.2,local_lock=none,addr=10.0.0.4");
  CHECK(n.options.attr_cache == Strings{"acregmin=0", "acregmax=0", "acdirmin=0", "acdirmax=0", "noac"});
  CHECK(n.options.rsize_bytes == 131072);
}

TEST_CASE("nfs: an old kernel's vers=4,minorversion=1 is 4.1; an IPv6 server loses its brackets") {
  // Composed: the source and options of a dCache nconnect report's mount command over IPv6, with
  // the version split as older kernels printed it.
  NetworkMount n = describe(
      "40 22 0:40 / /dcache/pool1 rw,relatime - nfs4 [fc07:2::11]:/dCache "
      "rw,vers=4,minorversion=1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp6,nconnect=16,port=0,timeo=600,"
      "retrans=2,sec=sys,clientaddr=fc07:2::1,local_lock=none,addr=fc07:2::11");
  CHECK(n.options.version == "4.1");
  CHECK(n.servers == Strings{"fc07:2::11"});
  CHECK(n.export_path == "/dCache");
  CHECK(n.options.proto == "tcp6");
}

// ---- parallel file systems ---------------------------------------------------------------------------

TEST_CASE("lustre: two MGS nodes over InfiniBand; the fsname and the whole fs") {
  // mount(8) on the same university cluster's login node: /bigwork.
  NetworkMount n = describe(
      "150 28 0:58 / /bigwork rw,relatime shared:100 - lustre 192.168.255.3@o2ib:192.168.255.4@o2ib:/bwlfs1 "
      "rw,checksum,flock,nouser_xattr,lruresize,lazystatfs,nouser_fid2path,verbose,encrypt");
  CHECK(n.backend == NetworkBackend::kLustre);
  CHECK(n.servers == Strings{"192.168.255.3@o2ib", "192.168.255.4@o2ib"});
  CHECK(n.volume == "bwlfs1");
  CHECK(n.export_path == "/");
  CHECK(network_mount_summary(n) == "lustre, servers 192.168.255.3@o2ib,192.168.255.4@o2ib, fs bwlfs1, export /");
}

TEST_CASE("lustre: one MGS with two NIDs, and a subdirectory mount") {
  // NVIDIA DGX SuperPOD docs (EXAScaler): "192.168.1.61@o2ib,192.168.1.62@o2ib1:/ai200"; the
  // subdirectory is ours, as mount.lustre(8) allows it.
  NetworkMount n = describe(
      "77 28 0:55 / /mnt/ai200 rw,relatime - lustre 192.168.1.61@o2ib,192.168.1.62@o2ib1:/ai200/datasets "
      "rw,flock,lazystatfs");
  CHECK(n.servers == Strings{"192.168.1.61@o2ib", "192.168.1.62@o2ib1"});
  CHECK(n.volume == "ai200");
  CHECK(n.export_path == "/datasets");
}

TEST_CASE("cephfs kernel client, old syntax: monitors in the source") {
  // CIRA-GEOIPS/youvegotdata tests/conftest.py: "a Ceph mount ... a Rocky 8.7 type of mount".
  NetworkMount n = describe(
      "469 200 0:55 / /mnt/data2 rw,relatime shared:332 - ceph "
      "168.10.10.9:5789,168.10.10.10:5789,168.10.10.11:5789,168.10.10.12:5789,168.10.10.13:5789:/ "
      "rw,name=admin,secret=<hidden>,acl");
  CHECK(n.backend == NetworkBackend::kCephFs);
  CHECK(n.servers == Strings{"168.10.10.9:5789", "168.10.10.10:5789", "168.10.10.11:5789", "168.10.10.12:5789",
                             "168.10.10.13:5789"});
  CHECK(n.export_path == "/");
  CHECK(n.volume == "");
}

TEST_CASE("cephfs kernel client, old syntax with a subdirectory and wsize") {
  // mount(8) in a Docker volume plugin's README (a per-container CephFS directory).
  NetworkMount n = describe(
      "300 29 0:70 / /var/lib/docker/plugins/8e9c/propagated-mount/e540 rw,relatime - ceph "
      "ceph-mon1:6789,ceph-mon1:6789:/container/nginx rw,name=nginx,secret=<hidden>,acl,wsize=16777216");
  CHECK(n.servers == Strings{"ceph-mon1:6789", "ceph-mon1:6789"});
  CHECK(n.export_path == "/container/nginx");
  CHECK(n.options.wsize_bytes == 16777216);
}

TEST_CASE("cephfs kernel client, new syntax: fs name in the source, monitors in mon_addr") {
  // youvegotdata's "Rocky 9.4 type of mount".
  NetworkMount n = describe(
      "828 76 0:61 / /mnt/data3 rw,relatime shared:436 - ceph admin@39bde8b9-3ab3-22f1-0b76-4cecefb8c925.data3=/ "
      "rw,name=admin,secret=<hidden>,ms_mode=prefer-crc,acl,mon_addr=10.168.42.192:4400/10.168.42.193:4400/"
      "168.10.10.9:4400/168.10.10.11:4400/168.10.10.12:4400");
  CHECK(n.backend == NetworkBackend::kCephFs);
  CHECK(n.volume == "data3");
  CHECK(n.export_path == "/");
  CHECK(n.servers == Strings{"10.168.42.192:4400", "10.168.42.193:4400", "168.10.10.9:4400", "168.10.10.11:4400",
                             "168.10.10.12:4400"});
}

TEST_CASE("cephfs kernel client, new syntax: a subdirectory; without mon_addr no servers") {
  // /proc/self/mounts in Linux commit 3b7d93db450e ("ceph: fix memory leak in
  // ceph_mds_auth_match()"); the fsid and monitor were redacted there, these are ours.
  NetworkMount n = describe(
      "512 30 0:66 / /ceph/containers rw,noatime - ceph "
      "services@6f1d3c2a-0b6e-4d7e-9a43-1c1d2b9a8e01.cephfs=/volumes/containers "
      "rw,name=services,secret=<hidden>,ms_mode=prefer-crc,mount_timeout=300,acl,mon_addr=10.4.0.11:3300,"
      "recover_session=clean");
  CHECK(n.volume == "cephfs");
  CHECK(n.export_path == "/volumes/containers");
  CHECK(n.servers == Strings{"10.4.0.11:3300"});

  NetworkMount bare = describe(
      "828 76 0:61 / /mnt/data3 rw,relatime shared:436 - ceph admin@39bde8b9-3ab3-22f1-0b76-4cecefb8c925.data3=/ "
      "rw,name=admin,secret=<hidden>,ms_mode=prefer-crc,acl");
  CHECK(bare.servers.empty());
  CHECK(bare.volume == "data3");
}

TEST_CASE("ceph-fuse: the FUSE client is its own backend; allow_other") {
  // mount(8) in the Ceph docs (doc/cephfs/client-auth.rst) and ceph-csi's ceph-fuse notes.
  NetworkMount n = describe(
      "61 28 0:54 / /mnt/cephfs1 rw,nosuid,nodev,relatime shared:40 - fuse.ceph-fuse ceph-fuse "
      "rw,user_id=0,group_id=0,allow_other");
  CHECK(n.backend == NetworkBackend::kCephFuse);
  CHECK(network_backend_name(n.backend) == "ceph-fuse");
  CHECK(n.servers.empty());
  CHECK(n.options.allow_other);
  CHECK(n.options.max_read_bytes == 0);
}

// ---- FUSE object stores and remote files ---------------------------------------------------------

TEST_CASE("mount-s3 mounts as plain fuse with source mountpoint-s3; the bucket is not in the table") {
  // A mountinfo row of Mountpoint for Amazon S3 1.24.0 quoted in a public trial report ("the actual
  // kernel identity is filesystem type fuse, source mountpoint-s3"), mount point ours; it matches
  // awslabs/mountpoint-s3 mountpoint-s3-fs/src/fuse/config.rs, which sets FSName and no Subtype.
  NetworkMount n = describe(
      "52 35 0:30 / /mnt/s3 ro,nosuid,nodev,noatime - fuse mountpoint-s3 "
      "ro,user_id=0,group_id=0,default_permissions,allow_other");
  CHECK(n.backend == NetworkBackend::kMountpointS3);
  CHECK(network_backend_name(n.backend) == "mountpoint-s3");
  CHECK(n.volume == "");
  CHECK(n.servers.empty());
  CHECK(n.options.allow_other);
}

TEST_CASE("s3fs: the source is the program's name; the bucket is not in the table") {
  // The mountinfo test data of rexray/gocsi (its GetMounts reads /proc/self/mountinfo).
  NetworkMount n = describe(
      "81 62 0:39 / /var/lib/rexray/volumes/s3fsvol01 rw,nosuid,nodev,relatime shared:31 - fuse.s3fs s3fs "
      "rw,user_id=0,group_id=0");
  CHECK(n.backend == NetworkBackend::kS3fs);
  CHECK(network_backend_kind(n.backend) == "an object store through FUSE");
  CHECK(n.volume == "");
  CHECK(n.servers.empty());
  CHECK_FALSE(n.options.allow_other);

  // mount(8) in the csi-s3 driver's README (s3fs mounter), "...,allow_other)".
  NetworkMount csi = describe(
      "95 40 0:58 / /var/lib/www/html rw,nosuid,nodev,relatime - fuse.s3fs s3fs rw,user_id=0,group_id=0,allow_other");
  CHECK(csi.backend == NetworkBackend::kS3fs);
  CHECK(csi.options.allow_other);
}

TEST_CASE("gcsfuse: the source is the bucket") {
  // mount(8) lines in a workspace tool's test of its gcsfuse detection: "bucket-1 on ... type
  // fuse.gcsfuse (rw,nosuid,nodev,relatime,user_id=1000,group_id=1001,default_permissions)".
  NetworkMount n = describe(
      "70 28 0:47 / /home/user/ws/bucket-1 rw,nosuid,nodev,relatime - fuse.gcsfuse bucket-1 "
      "rw,user_id=1000,group_id=1001,default_permissions");
  CHECK(n.backend == NetworkBackend::kGcsfuse);
  CHECK(n.volume == "bucket-1");
  CHECK_FALSE(n.options.allow_other);
  CHECK(network_mount_summary(n) == "gcsfuse, bucket bucket-1");
}

TEST_CASE("juicefs: the volume after JuiceFS:, max_read and allow_other") {
  // /proc/mounts on a JuiceFS client (volume alphalib), as recorded in a public ops log.
  NetworkMount n = describe(
      "120 29 0:77 / /ext4/alphalib rw,nosuid,nodev,relatime shared:80 - fuse.juicefs JuiceFS:alphalib "
      "rw,user_id=0,group_id=0,default_permissions,allow_other,max_read=131072");
  CHECK(n.backend == NetworkBackend::kJuiceFs);
  CHECK(n.volume == "alphalib");
  CHECK(n.options.max_read_bytes == 131072);
  CHECK(n.options.allow_other);
  CHECK(network_mount_summary(n) == "juicefs, volume alphalib; max_read 128 KiB, allow_other");
}

TEST_CASE("sshfs: host from user@host:/path (a real mount on this project's test machine)") {
  // sshfs 3.7.3 (fusermount3 3.14.0) against a loopback sshd, /proc/self/mountinfo verbatim.
  NetworkMount n = describe(
      "45 26 0:39 / /tmp/netfs-mnt-sshfs rw,nosuid,nodev,relatime - fuse.sshfs "
      "root@127.0.0.1:/tmp/netfs-ssh.vYe7/export rw,user_id=0,group_id=0");
  CHECK(n.backend == NetworkBackend::kSshfs);
  CHECK(n.servers == Strings{"127.0.0.1"});
  CHECK(n.export_path == "/tmp/netfs-ssh.vYe7/export");
  CHECK_FALSE(n.options.allow_other);

  // The same with -o allow_other.
  NetworkMount other = describe(
      "46 26 0:40 / /tmp/netfs-mnt-sshfs2 rw,nosuid,nodev,relatime - fuse.sshfs "
      "root@127.0.0.1:/tmp/netfs-ssh.vYe7/export/data rw,user_id=0,group_id=0,allow_other");
  CHECK(other.options.allow_other);
  CHECK(other.export_path == "/tmp/netfs-ssh.vYe7/export/data");
}

TEST_CASE("rclone: remote and path; the {hash} of a remote with overrides is dropped") {
  // rclone v1.60.1 mounting an sftp remote configured from the environment (hence "lab{oXR-T}"),
  // on this project's test machine, /proc/self/mountinfo verbatim.
  NetworkMount n = describe(
      "47 26 0:41 / /tmp/netfs-mnt-rclone rw,nosuid,nodev,relatime - fuse.rclone "
      "lab{oXR-T}:/tmp/netfs-ssh.vYe7/export rw,user_id=0,group_id=0");
  CHECK(n.backend == NetworkBackend::kRclone);
  CHECK(n.volume == "lab");
  CHECK(n.export_path == "/tmp/netfs-ssh.vYe7/export");
  CHECK(n.servers.empty());
}

TEST_CASE("seaweedfs: weed mount's source is the filer and the filer path") {
  // The /proc/mounts example in a SeaweedFS drive manager's source ("Example:
  // 172.16.37.66:8080:/buckets/agd-my-super-drive-hydpwa/ /mnt/test fuse.seaweedfs ...").
  NetworkMount n = describe(
      "130 29 0:80 / /mnt/test rw,nosuid,nodev,relatime - fuse.seaweedfs "
      "172.16.37.66:8080:/buckets/agd-my-super-drive-hydpwa/ rw,user_id=0,group_id=0");
  CHECK(n.backend == NetworkBackend::kSeaweedFs);
  CHECK(n.servers == Strings{"172.16.37.66:8080"});
  CHECK(n.export_path == "/buckets/agd-my-super-drive-hydpwa/");
}

TEST_CASE("seaweedfs: a filer given with its gRPC port is named by host:port") {
  // Verbatim from this machine: `weed mount -filer=127.0.0.1:21676.29136` (tests/lib/netfs.sh).
  NetworkMount n = describe(
      "45 26 0:39 / /tmp/swt/weed rw,nosuid,nodev,relatime - fuse.seaweedfs 127.0.0.1:21676.29136:/ "
      "rw,user_id=0,group_id=0,default_permissions,allow_other,max_read=1048576");
  CHECK(n.backend == NetworkBackend::kSeaweedFs);
  CHECK(n.servers == Strings{"127.0.0.1:21676"});
  CHECK(n.export_path == "/");
  CHECK(n.options.max_read_bytes == 1048576);
  CHECK(n.options.allow_other);
}

// ---- what is not network, and other FUSE ---------------------------------------------------------

TEST_CASE("local and memory file systems are not described") {
  for (const char* line : {"22 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw",
                           "23 22 0:26 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=4096k",
                           "24 22 0:52 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw,lowerdir=/a"}) {
    std::vector<MountEntry> m = parse_mountinfo(line);
    REQUIRE(m.size() == 1);
    CHECK_MESSAGE(!describe_network_mount(m[0]).has_value(), line);
  }
}

TEST_CASE("another FUSE program is fuse; an unknown fuse.X too") {
  // /proc/mounts of plex-fuse (glensc/plex-fuse#36).
  NetworkMount n = describe(
      "90 28 0:49 / /mnt/Pupu ro,nosuid,nodev,relatime - fuse.plexfuse plexfuse "
      "ro,user_id=1000,group_id=1000,allow_other");
  CHECK(n.backend == NetworkBackend::kOtherFuse);
  CHECK(network_backend_name(n.backend) == "fuse");
  CHECK(network_backend_kind(n.backend) == "a FUSE file system");
  CHECK(n.options.allow_other);
}

TEST_CASE("smb: server and share path, dialect as version") {
  // Composed from the fields cifs_show_options (fs/smb/client/cifsfs.c) prints; not captured.
  NetworkMount n = describe(
      "99 28 0:62 / /mnt/share rw,relatime - cifs //fileserver/data/projects "
      "rw,vers=3.1.1,cache=strict,username=alice,uid=1000,noforceuid,gid=1000,noforcegid,addr=10.0.0.9,file_mode=0755,"
      "dir_mode=0755,soft,nounix,serverino,mapposix,rsize=4194304,wsize=4194304,bsize=1048576,echo_interval=60,"
      "actimeo=1,closetimeo=1");
  CHECK(n.backend == NetworkBackend::kSmb);
  CHECK(n.servers == Strings{"fileserver"});
  CHECK(n.export_path == "data/projects");
  CHECK(n.options.version == "3.1.1");
  CHECK(n.options.attr_cache == Strings{"actimeo=1"});
  CHECK(n.options.rsize_bytes == 4194304);
}

TEST_CASE("9p and virtiofs: a tag, or a server over TCP") {
  // Composed (a QEMU virtio share, a 9p server over TCP, a virtiofs tag); not captured.
  NetworkMount tag =
      describe("30 22 0:45 / /mnt/host rw,relatime - 9p hostshare rw,cache=5,access=client,trans=virtio");
  CHECK(tag.backend == NetworkBackend::k9p);
  CHECK(tag.volume == "hostshare");
  CHECK(tag.servers.empty());
  NetworkMount tcp = describe("31 22 0:46 / /mnt/9p rw,relatime - 9p 10.0.2.2 rw,trans=tcp,port=564");
  CHECK(tcp.servers == Strings{"10.0.2.2"});
  NetworkMount vfs = describe("32 22 0:47 / /mnt/shared rw,relatime - virtiofs myfs rw");
  CHECK(vfs.backend == NetworkBackend::kVirtiofs);
  CHECK(vfs.volume == "myfs");
}

TEST_CASE("every backend has a name and a kind") {
  for (int i = 0; i <= static_cast<int>(NetworkBackend::kOther); ++i) {
    auto b = static_cast<NetworkBackend>(i);
    CHECK_FALSE(network_backend_name(b).empty());
    CHECK_FALSE(network_backend_kind(b).empty());
  }
}
