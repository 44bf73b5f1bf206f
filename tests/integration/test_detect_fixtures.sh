# `iogate detect --root DIR PATH` on fake sysfs/procfs trees copied from real kernels' layouts
# (tests/fixtures/sysfs/cases/*.sh): class, reason, stack shape, slowest leaf and mount per layout.
# Every case runs even when an earlier one fails; the test fails at the end if any check did.
source "$(dirname "$0")/lib.sh"
FIXTURES=${TESTS_DIR:-$(dirname "$0")/..}/fixtures/sysfs
source "$FIXTURES/lib.sh"
for f in "$FIXTURES"/cases/*.sh; do source "$f"; done
command -v jq >/dev/null || skip "needs jq"
command -v realpath >/dev/null || skip "needs realpath"
"$IOGATE" detect --help >/dev/null 2>&1 || fail "'$IOGATE detect --help' does not work: no detect command"

# shape: a stack as text, "name(kind)[child,child]", children and roots sorted by name so sysfs
# directory order does not matter. A file node (a loop's backing file) prints as "(file)" since
# its name is checked on its own. node($n): the first node named $n anywhere in the stack.
JQ_DEFS='
def shape: (if .kind == "file" then "(file)" else "\(.name)(\(.kind))" end)
  + (if ((.children // []) | length) > 0 then "[" + ([.children[] | shape] | sort | join(",")) + "]" else "" end);
def stack_shape: [.stack[] | shape] | sort | join(",");
def node($n): first(.stack[] | recurse(.children[]?) | select(.name == $n));
'

FAILURES=()
CHECKS=0
J=  # the JSON of the current detection
CASE=

# Run one check in a subshell, so that lib.sh's fail only ends that check.
_record() {
  CHECKS=$((CHECKS + 1))
  set +e
  ( "$@" )
  local rc=$?
  set -e
  ((rc == 0)) || FAILURES+=("$CASE: ${*: -1}")
}

# expect EXPR WANT MESSAGE: jq EXPR on the current JSON equals the jq literal WANT.
_expect() {
  local got
  got=$(jq -c "$JQ_DEFS $1" "$J" 2>&1) || fail "$3 (jq error on '$1': $got)"
  jq -e --argjson want "$2" "$JQ_DEFS ($1) == \$want" "$J" >/dev/null ||
    fail "$3: $1 is $got, want $2"
  pass "$3"
}
expect() { _record _expect "$@"; }

# expect_match EXPR REGEX MESSAGE: the string EXPR matches REGEX (case-insensitive).
_expect_match() {
  local got
  got=$(jq -c "$JQ_DEFS $1" "$J" 2>&1) || fail "$3 (jq error on '$1': $got)"
  jq -e --arg re "$2" "$JQ_DEFS ($1) | type == \"string\" and test(\$re; \"i\")" "$J" >/dev/null ||
    fail "$3: $1 is $got, which does not match /$2/i"
  pass "$3"
}
expect_match() { _record _expect_match "$@"; }

# expect_true EXPR MESSAGE: EXPR is true (assert_jq from lib.sh).
expect_true() { _record assert_jq "$J" "$JQ_DEFS $1" "$2"; }

# build NAME: build fixture NAME into $SCRATCH/NAME (once).
build() {
  CASE=$1
  [[ -d $SCRATCH/$1 ]] && return 0
  set +e
  ( set -e; "fixture_$1" "$SCRATCH/$1" )
  local rc=$?
  set -e
  ((rc == 0)) || { FAILURES+=("$1: the fixture does not build"); return 1; }
}

# detect NAME PATH: build NAME, run detect on PATH and point J at its JSON. Also checks the
# schema and that .path echoes PATH. Returns 1 (and records a failure) when detect fails.
DETECTIONS=0
detect() {
  build "$1" || return 1
  CASE="$1 $2"
  DETECTIONS=$((DETECTIONS + 1))
  J=$SCRATCH/$1.$DETECTIONS.json
  local err=$SCRATCH/$1.$DETECTIONS.err
  set +e
  "$IOGATE" detect --root "$SCRATCH/$1" "$2" --output-format json >"$J" 2>"$err"
  local rc=$?
  set -e
  CHECKS=$((CHECKS + 1))
  if ((rc != 0)); then
    FAILURES+=("$CASE: detect exited $rc: $(head -c 400 "$err")")
    echo "FAIL: $CASE: detect exited $rc: $(head -c 400 "$err")" >&2
    return 1
  fi
  if ! jq -e . "$J" >/dev/null 2>&1; then
    FAILURES+=("$CASE: output is not JSON: $(head -c 200 "$J")")
    echo "FAIL: $CASE: output is not JSON" >&2
    return 1
  fi
  echo "--- $CASE: $(jq -c '{class, reason, slowest_leaf, mount: .mount.point}' "$J")"
  expect '.schema' '"iogate.detect/v1"' "schema"
  expect '.path' "$(jq -n --arg p "$2" '$p')" "path echoed"
}

# The human format of the same detection mentions the class.
human_names_class() {
  local out
  out=$("$IOGATE" detect --root "$SCRATCH/nvme_local" /data --output-format human 2>&1) || fail "human format: detect failed: $out"
  grep -qi nvme <<<"$out" || fail "human output does not name the class: $out"
  pass "human output names the class"
}

# ---- local disks ------------------------------------------------------------------------------

if detect nvme_local /data/db; then
  expect '.mount.point' '"/data"' "mount point /data (not /data2, not /)"
  expect '.mount.fstype' '"ext4"' "fstype"
  expect '.mount.source' '"/dev/nvme0n1p1"' "mount source"
  expect '.mount.options' '"rw,relatime"' "per-mount options"
  expect '.mount.read_only' 'false' "read-write"
  expect '.class' '"nvme"' "class nvme"
  expect_match '.reason' 'Samsung SSD 980 PRO 1TB([^ ]|$)' "reason names the trimmed model"
  expect '.slowest_leaf' '"nvme0n1"' "slowest leaf is the namespace"
  expect '.overlay_lowerdirs' '[]' "no lowerdirs"
  expect 'stack_shape' '"nvme0n1p1(partition)[nvme0n1(disk)]"' "stack: partition over disk"
  expect 'node("nvme0n1p1") | [.class, .transport, .rotational, .removable]' '["nvme","nvme",false,false]' \
    "partition: class, transport, rotational, removable"
  expect 'node("nvme0n1p1").size_bytes' "$((1048576000 * 512))" "partition size from its own size file"
  expect 'node("nvme0n1p1") | [.logical_block_size, .physical_block_size, .nr_requests, .scheduler]' \
    '[512,4096,1023,"none"]' "partition reports its disk's queue/ (bracketed scheduler)"
  expect 'node("nvme0n1") | [.model, .transport, .size_bytes]' "[\"Samsung SSD 980 PRO 1TB\",\"nvme\",$((1953525168 * 512))]" \
    "disk: model trimmed of padding, transport, size"
  expect 'node("nvme0n1").backing_file' '""' "no backing file"
  _record human_names_class "human output names the class"
fi
if detect nvme_local /data2/cache; then
  expect '.mount.fstype' '"tmpfs"' "/data2 is the tmpfs"
  expect '.class' '"ram"' "tmpfs is ram"
  expect '.stack' '[]' "tmpfs has no stack"
  expect '.slowest_leaf' '""' "no leaf"
fi
if detect nvme_local /database; then
  expect '.mount.point' '"/"' "/database is under /, not /data"
  expect 'stack_shape' '"nvme0n1p2(partition)[nvme0n1(disk)]"' "root partition"
fi

if detect sata_ssd /srv/www; then
  expect '.mount | [.point, .source, .fstype]' '["/srv","/dev/sda2","ext4"]' "mount from proc/self/mountinfo (no proc/1)"
  expect '.class' '"sata-ssd"' "class sata-ssd"
  expect_match '.reason' 'rotational' "reason names rotational"
  expect 'stack_shape' '"sda2(partition)[sda(disk)]"' "stack"
  expect '.slowest_leaf' '"sda"' "slowest leaf"
  expect 'node("sda") | [.transport, .vendor, .model, .rotational]' '["sata","ATA","Samsung SSD 870",false]' \
    "disk: transport sata, vendor/model trimmed, non-rotational"
  expect 'node("sda") | [.scheduler, .nr_requests]' '["mq-deadline",64]' "scheduler is the bracketed one"
fi

if detect sata_hdd /backup/2024; then
  expect '.mount.point' '"/backup"' "mount from proc/1 (proc/self is a container's view)"
  expect '.mount | [.fstype, .read_only, .options]' '["xfs",true,"ro,relatime"]' "read-only xfs"
  expect '.class' '"hdd"' "class hdd"
  expect_match '.reason' 'rotational' "reason names rotational"
  expect 'stack_shape' '"sdb(disk)"' "fs on the whole disk"
  expect '.slowest_leaf' '"sdb"' "slowest leaf"
  expect 'node("sdb") | [.transport, .model, .rotational, .physical_block_size]' '["sata","ST4000DM004-2CV1",true,4096]' \
    "disk attributes"
fi

if detect sas_hdd /var/lib/hdfs/dn; then
  expect '.class' '"hdd"' "class hdd"
  expect_match '.reason' 'rotational' "reason names rotational"
  expect 'stack_shape' '"sda1(partition)[sda(disk)]"' "stack"
  expect 'node("sda") | [.transport, .vendor, .model]' '["sas","SEAGATE","ST4000NM0023"]' "SAS disk: transport sas"
  expect '.slowest_leaf' '"sda"' "slowest leaf"
fi

if detect virtio_blk /home/user/project; then
  expect '.mount | [.point, .source, .fstype]' '["/","/dev/vda1","ext4"]' "root mount"
  expect '.class' '"virtio"' "class virtio despite rotational=1"
  expect_match '.reason' 'virtio' "reason names virtio"
  expect 'stack_shape' '"vda1(partition)[vda(disk)]"' "stack"
  expect 'node("vda") | [.transport, .rotational, .scheduler, .nr_requests, .physical_block_size]' \
    '["virtio",true,"mq-deadline",256,4096]' "virtio disk attributes"
  expect 'node("vda").size_bytes' "$((536870912 * 512))" "disk size"
  expect '.slowest_leaf' '"vda"' "slowest leaf"
fi

if detect usb_stick "/media/alice/My Stick/DCIM"; then
  expect '.mount | [.point, .fstype, .source]' '["/media/alice/My Stick","vfat","/dev/sdd1"]' "mount point unescaped from \\040"
  expect '.class' '"usb"' "class usb"
  expect_match '.reason' 'usb' "reason names USB"
  expect 'stack_shape' '"sdd1(partition)[sdd(disk)]"' "stack"
  expect 'node("sdd") | [.transport, .removable, .vendor, .model]' '["usb",true,"SanDisk","Ultra"]' "removable USB disk"
  expect '.slowest_leaf' '"sdd"' "slowest leaf"
fi

if detect mmc_sdcard /home/pi; then
  expect '.class' '"mmc"' "class mmc"
  expect_match '.reason' 'mmc|SD' "reason names MMC/SD"
  expect 'stack_shape' '"mmcblk0p2(partition)[mmcblk0(disk)]"' "mmcblk partition naming"
  expect 'node("mmcblk0").transport' '"mmc"' "transport mmc"
fi

if detect zram /var/cache/build/x; then
  expect '.class' '"ram"' "zram is ram"
  expect_match '.reason' 'zram|ram' "reason names zram"
  expect 'stack_shape' '"zram0(ram)"' "kind ram"
  expect '.slowest_leaf' '"zram0"' "slowest leaf"
fi

# ---- clouds -----------------------------------------------------------------------------------

if detect aws_ebs /data/x; then
  expect '.class' '"cloud-block"' "EBS is cloud-block"
  expect_match '.reason' 'Amazon Elastic Block Store' "reason names the model"
  expect 'stack_shape' '"nvme1n1(disk)"' "the data volume, not the root one"
  expect 'node("nvme1n1") | [.model, .transport]' '["Amazon Elastic Block Store","nvme"]' "model trimmed, transport nvme"
  expect '.mount.fstype' '"xfs"' "fstype"
  expect '.slowest_leaf' '"nvme1n1"' "slowest leaf"
fi

if detect ec2_instance_store /mnt/scratch/tmp; then
  expect '.class' '"nvme"' "instance store is nvme"
  expect_match '.reason' 'Amazon EC2 NVMe Instance Storage' "reason names the model"
  expect 'stack_shape' '"nvme1n1(disk)"' "stack"
fi
if detect ec2_instance_store /etc; then
  expect '.class' '"cloud-block"' "the root EBS volume is cloud-block"
  expect 'stack_shape' '"nvme0n1p1(partition)[nvme0n1(disk)]"' "root stack"
fi

if detect gcp_pd_scsi /home/user; then
  expect '.class' '"cloud-block"' "GCE PD over virtio-scsi is cloud-block (not virtio, not hdd)"
  expect_match '.reason' 'PersistentDisk' "reason names the model"
  expect 'stack_shape' '"sda1(partition)[sda(disk)]"' "stack"
  expect 'node("sda") | [.vendor, .model, .rotational]' '["Google","PersistentDisk",true]' "vendor/model trimmed"
fi

if detect gcp_pd_nvme /mnt/disks/data/x; then
  expect '.class' '"cloud-block"' "nvme_card-pd is cloud-block"
  expect_match '.reason' 'nvme_card-pd' "reason names the model"
  expect 'stack_shape' '"nvme0n2(disk)"' "second namespace"
  expect '.slowest_leaf' '"nvme0n2"' "slowest leaf"
fi

if detect gcp_local_ssd /mnt/disks/ssd0; then
  expect '.class' '"nvme"' "nvme_card0 (local SSD) is nvme"
  expect_match '.reason' 'nvme_card0' "reason names the model"
  expect 'stack_shape' '"nvme1n1(disk)"' "stack"
  expect 'node("nvme1n1") | [.logical_block_size, .physical_block_size]' '[4096,4096]' "4K blocks"
fi
if detect gcp_local_ssd /; then
  expect '.class' '"cloud-block"' "the boot PD (nvme_card-pd) is cloud-block"
fi

if detect azure_scsi /datadrive/db; then
  expect '.class' '"cloud-block"' "Msft Virtual Disk is cloud-block"
  expect_match '.reason' 'Virtual Disk' "reason names the model"
  expect 'stack_shape' '"sdc1(partition)[sdc(disk)]"' "the data disk"
  expect 'node("sdc") | [.vendor, .model]' '["Msft","Virtual Disk"]' "vendor/model trimmed"
fi

if detect azure_nvme /datadrive; then
  expect '.class' '"cloud-block"' "MSFT NVMe Accelerator v1.0 is cloud-block"
  expect_match '.reason' 'MSFT NVMe Accelerator v1\.0' "reason names the model"
  expect 'stack_shape' '"nvme0n2(disk)"' "stack"
fi
if detect azure_nvme /mnt/tmp; then
  expect '.class' '"nvme"' "Microsoft NVMe Direct Disk is nvme"
  expect_match '.reason' 'Microsoft NVMe Direct Disk' "reason names the model"
  expect 'stack_shape' '"nvme1n1(disk)"' "stack"
fi

if detect nvme_tcp /mnt/remote/vol; then
  expect '.class' '"nvme-of"' "NVMe/TCP is nvme-of"
  expect_match '.reason' 'tcp' "reason names the transport"
  expect 'stack_shape' '"nvme2n1(disk)"' "stack"
  expect 'node("nvme2n1").transport' '"tcp"' "transport from the controller's transport file"
  expect '.slowest_leaf' '"nvme2n1"' "slowest leaf"
fi

# ---- stacked devices --------------------------------------------------------------------------

if detect lvm_nvme /var/lib/postgresql; then
  expect '.mount | [.point, .source]' '["/","/dev/mapper/vg0-root"]' "root on the LV"
  expect '.class' '"nvme"' "class of the only leaf"
  expect_match '.reason' 'nvme0n1|Samsung' "reason names the leaf"
  expect 'stack_shape' '"dm-0(lvm)[nvme0n1p2(partition)[nvme0n1(disk)]]"' "LV over partition over disk"
  expect 'node("dm-0").class' '"nvme"' "inner node takes its leaves' class"
  expect '.slowest_leaf' '"nvme0n1"' "slowest leaf"
fi

if detect lvm_mixed /srv/media/movies; then
  expect '.class' '"mixed"' "NVMe + HDD is mixed"
  expect_match '.reason' 'sda|hdd' "reason names the slow leaf"
  expect 'stack_shape' '"dm-1(lvm)[nvme0n1p3(partition)[nvme0n1(disk)],sda1(partition)[sda(disk)]]"' "LV over two PVs"
  expect '[node("dm-1").class, node("nvme0n1").class, node("sda").class]' '["mixed","nvme","hdd"]' "per-node classes"
  expect '.slowest_leaf' '"sda"' "slowest leaf is the HDD"
fi

if detect md_raid1 /srv/data/x; then
  expect '.mount.point' '"/srv/data"' "bind mount of a subtree"
  expect '.class' '"sata-ssd"' "RAID1 of two SATA SSDs"
  expect_match '.reason' 'raid1|md0|rotational' "reason"
  expect 'stack_shape' '"md0(md-raid1)[sda1(partition)[sda(disk)],sdb1(partition)[sdb(disk)]]"' "md over two partitions"
  expect_true '.slowest_leaf | IN("sda", "sdb")' "slowest leaf is one of the mirrors"
fi

if detect dm_crypt /home/alice; then
  expect '.mount | [.point, .source]' '["/home","/dev/mapper/luks-3f6c2a9e-0b4d-4e8f-9a1c-5d7e2b8f6c40"]' "mount"
  expect '.class' '"nvme"' "class of the leaf"
  expect 'stack_shape' '"dm-0(dm-crypt)[nvme0n1p3(partition)[nvme0n1(disk)]]"' "crypt over partition"
  expect 'node("dm-0").logical_block_size' '4096' "dm-0's own queue"
  expect '.slowest_leaf' '"nvme0n1"' "slowest leaf"
fi

if detect loop_tmpfs /mnt/scratch/x; then
  expect '.class' '"ram"' "loop over a tmpfs file is ram"
  expect_match '.reason' 'tmpfs|ram|/dev/shm' "reason names tmpfs"
  expect 'stack_shape' '"loop0(loop)[(file)]"' "loop over its backing file, the file on no device"
  expect 'node("loop0").backing_file' '"/dev/shm/scratch.img"' "backing file"
  expect_match '.stack[0].children[0].name' 'scratch\.img' "the file node names the file"
fi
if detect loop_tmpfs /snap/core22/1380/usr; then
  expect '.mount | [.fstype, .read_only]' '["squashfs",true]' "read-only squashfs"
  expect '.class' '"virtio"' "loop over a file on the virtio root"
  expect 'stack_shape' '"loop1(loop)[(file)[vda1(partition)[vda(disk)]]]"' "the file's children are its fs's stack"
  expect '.slowest_leaf' '"vda"' "slowest leaf"
fi

# ---- file systems without a block device -------------------------------------------------------

if detect nfs4 /mnt/nfs/alice; then
  expect '.mount | [.fstype, .source]' '["nfs4","fileserver.example.com:/export/home"]' "mount"
  expect '.class' '"network-fs"' "class network-fs"
  expect_match '.reason' 'nfs4' "reason names the fs type"
  expect '.stack' '[]' "no stack"
  expect '.slowest_leaf' '""' "no leaf"
fi

OVL=/var/lib/docker/overlay2
OVL_ID=4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a4f6e8c1b3d5a7f9e0c2b4d6a8f
if detect overlay $OVL/$OVL_ID/merged/app; then
  expect '.mount | [.point, .fstype]' "[\"$OVL/$OVL_ID/merged\",\"overlay\"]" "the overlay mount"
  expect '.class' '"virtio"' "class of the upperdir's disk"
  expect_match '.reason' 'vdb|virtio' "reason"
  expect 'stack_shape' '"vdb(disk)"' "the upperdir's mount's stack (not /)"
  expect '.overlay_lowerdirs' "[\"$OVL/l/AB7KQ2ZJ3XWPVYF4N5D6E7R8T9\",\"$OVL/l/CD2LM3NP4QR5ST6UV7WX8YZ9A0\"]" "lowerdirs in order"
  expect '.slowest_leaf' '"vdb"' "slowest leaf"
fi

if detect btrfs /srv/pool/photos; then
  expect '.mount | [.fstype, .source]' '["btrfs","/dev/sdb"]' "mount"
  expect '.class' '"hdd"' "two HDDs"
  expect_match '.reason' 'sdb|sdc|rotational' "reason"
  expect '.stack | length' '2' "two stack roots"
  expect 'stack_shape' '"sdb(disk),sdc(disk)"' "both members from /sys/fs/btrfs/<uuid>/devices"
  expect_true '.slowest_leaf | IN("sdb", "sdc")' "slowest leaf is a member"
fi
if detect btrfs /home/alice; then
  expect '.mount.point' '"/home"' "subvolume mount"
  expect '.class' '"nvme"' "root btrfs on NVMe"
  expect 'stack_shape' '"nvme0n1p2(partition)[nvme0n1(disk)]"' "the member of the other uuid dir"
fi

echo "$DETECTIONS detections, $CHECKS checks, ${#FAILURES[@]} failed"
if ((${#FAILURES[@]})); then
  printf '  %s\n' "${FAILURES[@]}" >&2
  fail "${#FAILURES[@]} of $CHECKS checks failed"
fi
pass "all $CHECKS checks"
