#!/usr/bin/env bash
# The steady-device rig: an ext4 loop device throttled by the cgroup I/O controller, to stand in
# for rate-limited volumes (gp3's 3,000 baseline and 16,000 provisioned IOPS, a 50k IOPS local
# NVMe) on a machine that has none. The host's disk drifts 20-30% between rounds; a device capped
# well below what it can do serves exactly its cap, round after round.
#
#   bash tests/lib/rig.sh up NAME [--backing disk|tmpfs] [--riops N] [--wiops N] [--rbps N] [--wbps N] [--size 1g]
#                                [--writeback]
#   bash tests/lib/rig.sh run NAME COMMAND...    # COMMAND in the rig's cgroup (its I/O is throttled)
#   bash tests/lib/rig.sh dir NAME               # where the rig's filesystem is mounted
#   bash tests/lib/rig.sh cgroup NAME            # the rig's cgroup directory (a daemon joins it to be throttled)
#   bash tests/lib/rig.sh down NAME              # unmount, detach, remove the cgroup and the backing file
#   bash tests/lib/rig.sh check                  # which pieces this kernel allows, one line each
#
# Or sourced: rig_up, rig_run, rig_dir, rig_cgroup, rig_down, rig_check do the same, and
# rig_down_all (for an EXIT trap) tears down every rig this shell made. --backing disk puts the
# backing file on the real disk (/var/tmp, RIG_DISK_DIR) with the loop device in direct-I/O mode;
# tmpfs puts it in /dev/shm (RIG_TMPFS_DIR), a fast device where the engine's own cost dominates.
# No cap = unthrottled. --writeback caps buffered writes too: a page-cache write reaches the device
# later, from the kernel's flusher threads, which cgroup v1 counts in the root cgroup, not the
# writer's; the caps then go on the root blkio cgroup for this loop device alone, so everything
# that reaches it is held to them, writeback and any process (rig_run is then not needed). On
# cgroup v2 the writer's cgroup owns its writeback, so the rig's own cgroup holds it already.
# A piece the kernel refuses (no loop devices, no blkio/io controller, no device-mapper for an
# HDD-like latency) makes `up` fail with one line that names it; `check` lists them all.
# Needs root. State lives in /run/iogate-rig/NAME; nothing is left behind by `down`.

RIG_STATE=${RIG_STATE:-/run/iogate-rig}
RIG_DISK_DIR=${RIG_DISK_DIR:-/var/tmp}
RIG_TMPFS_DIR=${RIG_TMPFS_DIR:-/dev/shm}
_rig_made=()

_rig_err() { echo "rig: $*" >&2; return 1; }

# Which cgroup I/O controller this machine has: "v1" (blkio.throttle.*), "v2" (io.max) or "".
rig_cgroup_kind() {
  if [[ -f /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]]; then
    echo v1
  elif [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw io /sys/fs/cgroup/cgroup.controllers; then
    echo v2
  fi
}

_rig_cgroup_path() {  # NAME
  case $(rig_cgroup_kind) in
    v1) echo "/sys/fs/cgroup/blkio/iogate-rig-$1" ;;
    v2) echo "/sys/fs/cgroup/iogate-rig-$1" ;;
  esac
}

# One line per piece: "ok ..." or "no ...: why". Exit 0 when the throttled loop rig works.
rig_check() {
  local rc=0
  if [[ $(id -u) -ne 0 ]]; then echo "no root: the rig needs root (losetup, mount, cgroups)"; return 1; fi
  if losetup --find >/dev/null 2>&1; then echo "ok loop devices"; else echo "no loop devices: losetup --find failed"; rc=1; fi
  case $(rig_cgroup_kind) in
    v1) echo "ok cgroup v1 blkio throttle (blkio.throttle.{read,write}_{iops,bps}_device)" ;;
    v2) echo "ok cgroup v2 io controller (io.max riops/wiops/rbps/wbps)" ;;
    *) echo "no cgroup I/O controller: neither /sys/fs/cgroup/blkio nor io in /sys/fs/cgroup/cgroup.controllers"; rc=1 ;;
  esac
  if grep -qw device-mapper /proc/devices 2>/dev/null && command -v dmsetup >/dev/null &&
     dmsetup targets 2>/dev/null | grep -qw delay; then
    echo "ok dm-delay (an HDD-like fixed latency)"
  else
    echo "no dm-delay: the kernel has no device-mapper or no delay target (/proc/devices, dmsetup targets); an HDD-like device can only be emulated by an IOPS cap"
  fi
  if [[ $(rig_cgroup_kind) == v2 ]] && [[ -n $(find /sys/fs/cgroup -maxdepth 2 -name io.latency -print -quit) ]]; then
    echo "ok cgroup v2 io.latency"
  else
    echo "no io.latency: it is a cgroup v2 controller file and this machine has $( [[ $(rig_cgroup_kind) == v1 ]] && echo "cgroup v1" || echo "no v2 io controller")"
  fi
  return $rc
}

rig_dir() { cat "$RIG_STATE/$1/mnt" 2>/dev/null || _rig_err "no rig named $1 (tests/lib/rig.sh up $1 first)"; }
rig_cgroup() { cat "$RIG_STATE/$1/cgroup" 2>/dev/null || _rig_err "no rig named $1 (tests/lib/rig.sh up $1 first)"; }

rig_up() {  # NAME [options]
  local name=$1; shift
  [[ $name =~ ^[a-z0-9-]+$ ]] || { _rig_err "NAME must be lowercase letters, digits and dashes, got \"$name\""; return; }
  local backing=disk riops="" wiops="" rbps="" wbps="" size=1g writeback=false
  while (($#)); do
    case $1 in
      --backing) backing=$2; shift 2 ;;
      --riops) riops=$2; shift 2 ;;
      --wiops) wiops=$2; shift 2 ;;
      --rbps) rbps=$2; shift 2 ;;
      --wbps) wbps=$2; shift 2 ;;
      --size) size=$2; shift 2 ;;
      --writeback) writeback=true; shift ;;
      *) _rig_err "unknown option $1"; return ;;
    esac
  done
  local v
  for v in "$riops" "$wiops" "$rbps" "$wbps"; do
    [[ -z $v || $v =~ ^[1-9][0-9]*$ ]] || { _rig_err "a cap must be a positive integer, got \"$v\""; return; }
  done
  [[ $(id -u) -eq 0 ]] || { _rig_err "needs root (losetup, mount, cgroups)"; return; }
  local dir
  case $backing in
    disk) dir=$RIG_DISK_DIR ;;
    tmpfs) dir=$RIG_TMPFS_DIR ;;
    *) _rig_err "--backing must be disk or tmpfs, got \"$backing\""; return ;;
  esac
  local state=$RIG_STATE/$name
  [[ ! -e $state ]] || { _rig_err "a rig named $name is already up (tests/lib/rig.sh down $name)"; return; }
  mkdir -p "$state"
  _rig_made+=("$name")
  local img
  img=$(mktemp "$dir/iogate-rig-$name.XXXXXX.img") || { rig_down "$name"; _rig_err "cannot create a backing file in $dir"; return; }
  echo "$img" >"$state/img"
  # Allocated up front, so the loop device's reads hit real blocks and not holes.
  fallocate -l "$size" "$img" 2>/dev/null || truncate -s "$size" "$img"
  local dev
  dev=$(losetup --find --show --direct-io=on "$img" 2>/dev/null) ||
    dev=$(losetup --find --show "$img" 2>/dev/null) ||
    { rig_down "$name"; _rig_err "losetup failed: this machine has no free loop device"; return; }
  echo "$dev" >"$state/dev"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >/dev/null ||
    { rig_down "$name"; _rig_err "mkfs.ext4 $dev failed"; return; }
  local mnt=$state/mnt.d
  mkdir -p "$mnt"
  mount "$dev" "$mnt" || { rig_down "$name"; _rig_err "mount $dev failed"; return; }
  echo "$mnt" >"$state/mnt"
  local kind cg majmin
  kind=$(rig_cgroup_kind)
  [[ -n $kind ]] || { rig_down "$name"; _rig_err "no cgroup I/O controller (neither v1 blkio nor v2 io): cannot throttle"; return; }
  cg=$(_rig_cgroup_path "$name")
  mkdir -p "$cg" || { rig_down "$name"; _rig_err "cannot create cgroup $cg"; return; }
  echo "$cg" >"$state/cgroup"
  majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
  local capped=$cg
  if [[ $kind == v1 && $writeback == true ]]; then
    capped=$(dirname "$cg")
    echo "$majmin" >"$state/root-caps"
  fi
  if [[ $kind == v1 ]]; then
    [[ -z $riops ]] || echo "$majmin $riops" >"$capped/blkio.throttle.read_iops_device"
    [[ -z $wiops ]] || echo "$majmin $wiops" >"$capped/blkio.throttle.write_iops_device"
    [[ -z $rbps ]] || echo "$majmin $rbps" >"$capped/blkio.throttle.read_bps_device"
    [[ -z $wbps ]] || echo "$majmin $wbps" >"$capped/blkio.throttle.write_bps_device"
  else
    local line=""
    [[ -z $riops ]] || line+=" riops=$riops"
    [[ -z $wiops ]] || line+=" wiops=$wiops"
    [[ -z $rbps ]] || line+=" rbps=$rbps"
    [[ -z $wbps ]] || line+=" wbps=$wbps"
    [[ -z $line ]] || echo "$majmin$line" >"$cg/io.max"
  fi || { rig_down "$name"; _rig_err "the kernel refused the throttle on $majmin"; return; }
  printf '%s\n' "riops=${riops:-max} wiops=${wiops:-max} rbps=${rbps:-max} wbps=${wbps:-max}$($writeback && echo " writeback")" >"$state/caps"
  echo "$backing" >"$state/backing"
}

# Runs COMMAND in the rig's cgroup: everything it and its children submit to the loop device is
# throttled. The caller's own shell stays where it is.
rig_run() {  # NAME COMMAND...
  local name=$1; shift
  local cg
  cg=$(cat "$RIG_STATE/$name/cgroup" 2>/dev/null) || { _rig_err "no rig named $name"; return; }
  (echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@")
}

rig_describe() {  # NAME -> one line: device, backing, caps
  local s=$RIG_STATE/$1
  echo "$(cat "$s/dev") (ext4 on a $(cat "$s/backing")-backed loop file, $(cat "$s/caps"), cgroup $(rig_cgroup_kind))"
}

rig_down() {  # NAME: undoes whatever `up` got to; quiet, idempotent
  local name=$1 s=$RIG_STATE/$1 cg
  [[ -d $s ]] || return 0
  if [[ -f $s/mnt ]]; then umount "$(cat "$s/mnt")" 2>/dev/null || umount -l "$(cat "$s/mnt")" 2>/dev/null; fi
  [[ -f $s/dev ]] && losetup -d "$(cat "$s/dev")" 2>/dev/null
  if [[ -f $s/root-caps ]]; then  # --writeback on v1: the root cgroup's entries for this device go
    local f root=/sys/fs/cgroup/blkio
    for f in read_iops_device write_iops_device read_bps_device write_bps_device; do
      echo "$(cat "$s/root-caps") 0" >"$root/blkio.throttle.$f" 2>/dev/null
    done
  fi
  if [[ -f $s/cgroup ]]; then
    cg=$(cat "$s/cgroup")
    # Anything still in it goes back to the root first, or rmdir fails with EBUSY.
    if [[ -f $cg/cgroup.procs ]]; then
      while read -r pid; do echo "$pid" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null; done <"$cg/cgroup.procs"
    fi
    rmdir "$cg" 2>/dev/null
  fi
  [[ -f $s/img ]] && rm -f "$(cat "$s/img")"
  rm -rf "$s"
  return 0
}

rig_down_all() { local n; for n in "${_rig_made[@]}"; do rig_down "$n"; done; }

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  cmd=${1:-}
  shift || true
  case $cmd in
    up) rig_up "$@" && rig_dir "$1" ;;
    run) rig_run "$@" ;;
    dir) rig_dir "$@" ;;
    cgroup) rig_cgroup "$@" ;;
    down) rig_down "$@" ;;
    check) rig_check ;;
    *) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
fi
