# sshfs over a loopback OpenSSH server: a FUSE network file system the tests and benchmarks start
# and stop on this machine (Debian's openssh-server and sshfs).
#
#   sshfs_up NAME DIR [--run PREFIX...] [-- SSHFS_OPTION...]   # serve DIR and mount it (not in a $(...):
#                                                          # sshfs_down_all must see it)
#   sshfs_mnt NAME                                         # where NAME is mounted
#   sshfs_remount NAME                                     # a fresh mount: a cold client (no cached lookups or pages)
#   sshfs_cold NAME                                        # a fresh mount, and the server's cached pages of DIR dropped
#   sshfs_down NAME                                        # unmount, stop the server, remove the state; idempotent
#   sshfs_down_all                                         # every one this shell started (for an EXIT trap)
#
# The server is an sshd of its own (own host key, own authorized key, loopback only, a free port)
# whose sftp-server children read DIR. --run PREFIX... starts it under a command prefix, e.g.
# `rig_run RIG` (tests/lib/rig.sh): the server's reads then pay the rig's I/O cap, as a file server's
# disk would. The client is sshfs's defaults (its 20 s attribute cache, the kernel's 1 s FUSE
# entry timeout) plus the SSHFS_OPTIONs. Needs root (sshd's privilege separation, FUSE mounts).
# State lives in $SSHFS_STATE/NAME (default /run/iogate-sshfs).

# Free ports and unmounting are the network file systems' (netfs.sh).
source "$(dirname "${BASH_SOURCE[0]}")/netfs.sh"
SSHFS_STATE=${SSHFS_STATE:-/run/iogate-sshfs}
_sshfs_made=()

_sshfs_err() { echo "sshfs: $*" >&2; return 1; }

sshfs_check() {
  [[ $(id -u) -eq 0 ]] || { echo "sshfs rig needs root (sshd, FUSE mounts)"; return 1; }
  [[ -x /usr/sbin/sshd ]] || { echo "no sshd: apt-get install openssh-server (bash scripts/install-deps.sh)"; return 1; }
  command -v sshfs >/dev/null || { echo "no sshfs: apt-get install sshfs (bash scripts/install-deps.sh)"; return 1; }
  [[ -c /dev/fuse ]] || { echo "no /dev/fuse: the kernel has no FUSE (modprobe fuse)"; return 1; }
}

sshfs_mnt() { cat "$SSHFS_STATE/$1/mnt-path" 2>/dev/null || _sshfs_err "no sshfs named $1 (sshfs_up $1 first)"; }

_sshfs_mount() {  # NAME
  local st=$SSHFS_STATE/$1 opts=()
  mapfile -t opts <"$st/options"
  mkdir -p "$st/mnt"
  sshfs -p "$(cat "$st/port")" -o "IdentityFile=$st/client_key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null" \
    -o LogLevel=ERROR "${opts[@]}" "root@127.0.0.1:$(cat "$st/dir")" "$st/mnt" 2>"$st/sshfs.log" ||
    { _sshfs_err "$1: sshfs mount failed: $(tail -n 2 "$st/sshfs.log" | tr '\n' ' ')"; return 1; }
  local i
  for i in $(seq 50); do
    findmnt -n "$st/mnt" >/dev/null && return 0
    sleep 0.1
  done
  _sshfs_err "$1: $st/mnt never showed in the mount table"
}

sshfs_up() {  # NAME DIR [--run PREFIX...] [-- SSHFS_OPTION...]
  local name=$1 dir=$2 run=() opts=()
  shift 2
  while (($#)); do
    case $1 in
      --run) shift; while (($#)) && [[ $1 != -- ]]; do run+=("$1"); shift; done ;;
      --) shift; opts=("$@"); break ;;
      *) _sshfs_err "sshfs_up: unknown argument $1"; return 1 ;;
    esac
  done
  local why
  why=$(sshfs_check) || { _sshfs_err "$why"; return 1; }
  [[ -d $dir ]] || { _sshfs_err "$name: $dir is not a directory"; return 1; }
  local st=$SSHFS_STATE/$name port
  [[ ! -e $st ]] || { _sshfs_err "$name exists ($st): sshfs_down $name first"; return 1; }
  mkdir -p "$st" /run/sshd
  _sshfs_made+=("$name")
  port=$(_netfs_free_ports 1) || return 1
  echo "$port" >"$st/port"
  realpath "$dir" >"$st/dir"
  printf '%s\n' "${opts[@]}" | sed '/^$/d' >"$st/options"
  ssh-keygen -q -t ed25519 -N '' -f "$st/host_key" -C iogate-test-host
  ssh-keygen -q -t ed25519 -N '' -f "$st/client_key" -C iogate-test-client
  cp "$st/client_key.pub" "$st/authorized_keys"
  cat >"$st/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $st/host_key
PidFile $st/sshd.pid
AuthorizedKeysFile $st/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
  "${run[@]}" /usr/sbin/sshd -f "$st/sshd_config" -E "$st/sshd.log" ||
    { _sshfs_err "$name: sshd did not start: $(tail -n 2 "$st/sshd.log" | tr '\n' ' ')"; return 1; }
  local i
  for i in $(seq 50); do
    [[ -s $st/sshd.pid ]] && ss -Htln "sport = :$port" | grep -q . && break
    sleep 0.1
  done
  [[ -s $st/sshd.pid ]] || { _sshfs_err "$name: sshd wrote no pid file: $(tail -n 2 "$st/sshd.log" | tr '\n' ' ')"; return 1; }
  echo "$st/mnt" >"$st/mnt-path"
  _sshfs_mount "$name"
}

_sshfs_unmount() { _netfs_umount "$SSHFS_STATE/$1/mnt"; }  # NAME

sshfs_remount() {  # NAME
  [[ -d $SSHFS_STATE/$1 ]] || { _sshfs_err "no sshfs named $1"; return 1; }
  _sshfs_unmount "$1" && _sshfs_mount "$1"
}

# A first epoch's conditions for the next reader: nothing cached by the client (a new mount: the
# kernel's dentries and pages and sshfs's own caches go with the old one), and DIR's pages out of
# the server's page cache (posix_fadvise DONTNEED on each file, clean pages only), so its reads go
# to its disk and pay the rig's cap. The server's own dentries and inodes stay, as a file
# server's metadata mostly lives in its memory.
sshfs_cold() {  # NAME
  sshfs_remount "$1" || return 1
  python3 - "$(cat "$SSHFS_STATE/$1/dir")" <<'PY'
import os, sys
for d, _, names in os.walk(sys.argv[1]):
    for n in names:
        try:
            fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}

sshfs_down() {  # NAME: quiet and idempotent, under set -e too
  local st=$SSHFS_STATE/$1 pid
  [[ -d $st ]] || return 0
  _sshfs_unmount "$1"
  pid=$(cat "$st/sshd.pid" 2>/dev/null || true)
  # The listener and its sessions (each sftp-server is a child of a session sshd).
  if [[ -n $pid ]]; then
    pkill -TERM -P "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
  fi
  rm -rf "$st"
}

sshfs_down_all() { local n; for n in "${_sshfs_made[@]}"; do sshfs_down "$n"; done; }
