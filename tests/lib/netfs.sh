# Real network file systems on this machine, for the integration tests and the benchmarks: a
# SeaweedFS cluster (one `weed server`: master, volume server, filer and S3 gateway on free
# loopback ports), FUSE mounts of its filer (`weed mount`, fstype fuse.seaweedfs) and s3fs-fuse
# mounts of a bucket on its S3 gateway (fstype fuse.s3fs). Source this file.
#
#   seaweed_up STATE [--data-dir DIR] [--cgroup DIR] [--volume-size-mb N]
#       starts a cluster whose every file (logs, pids, ports, credentials, filer store, and the
#       volumes unless --data-dir) lives under STATE, which must not exist yet. --data-dir puts
#       the volume data elsewhere (a rate-limited rig's filesystem, tests/lib/rig.sh dir NAME);
#       --cgroup DIR makes the server join that cgroup first (tests/lib/rig.sh cgroup NAME), so its
#       reads of a rig are throttled (cgroup v1 does not throttle buffered writes). Returns once
#       the master, a writable volume, the filer and the S3 gateway answer.
#   seaweed_get STATE KEY          a value of the cluster: master_port volume_port filer_port
#                                  filer_address s3_port s3_url access_key secret_key pid log
#   seaweed_bucket STATE BUCKET    creates BUCKET through the S3 API (the filer's /buckets/BUCKET)
#   weed_mount_up STATE MNT [FLAG...]     `weed mount` of the filer's / (or -filer.path=...) at MNT;
#                                  -cacheCapacityMB=0 for reads that reach the server every time
#   s3fs_up STATE BUCKET MNT [OPT...]     s3fs of BUCKET at MNT; OPT are s3fs -o options
#   netfs_mount_down STATE MNT     unmounts MNT (fusermount -u, else umount -l), ends its daemon
#   seaweed_down STATE             unmounts every mount of the cluster, ends the server, removes
#                                  STATE and what it made in --data-dir's DIR (not DIR)
#   netfs_down_all                 seaweed_down on every cluster this shell started (EXIT traps)
#
# Every up function waits until the thing answers (NETFS_TIMEOUT seconds, default 60) and fails
# with one line naming what did not answer, followed by the tail of the daemon's log. Every down
# function is quiet, idempotent and safe on a half-made STATE, so a test's EXIT trap may call it
# whatever happened, and it finishes even if a second signal ends the caller meanwhile; it reads
# everything from STATE, so another shell may call it too. A daemon is ended only when its
# /proc/PID/cmdline names STATE: a recycled pid is never killed. Mount points that did not exist
# are made, and removed by the down. A bucket is the filer's /buckets/NAME: `weed mount` sees it.
#
# Prerequisites fail loudly, naming the fix: weed is the pinned build of tests/upstream
# (bash tests/upstream/build.sh weed), or $WEED; s3fs is Debian's s3fs (apt-get install s3fs);
# fusermount3 is fuse3's. Mounting needs /dev/fuse (netfs_fuse_ok says whether it is there).

NETFS_TIMEOUT=${NETFS_TIMEOUT:-60}
_netfs_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_netfs_made=()

_netfs_err() { echo "netfs: $*" >&2; return 1; }

# _netfs_fail_log LOG WHAT: the one-line error, then the log's tail (indented).
_netfs_fail_log() {
  echo "netfs: $2" >&2
  if [[ -f $1 ]]; then
    echo "netfs: last lines of $1:" >&2
    tail -n 15 "$1" | sed 's/^/    /' >&2
  fi
  return 1
}

# The pinned weed: $WEED, else tests/upstream/build.sh's cache, checked to be the build of the
# pin in versions.env (a link left from an older pin would test another SeaweedFS).
netfs_weed() {
  local weed want have
  # shellcheck source=../upstream/versions.env
  want=$(source "$_netfs_lib_dir/../upstream/versions.env" && echo "${SEAWEEDFS_VERSION##*-}")
  weed=${WEED:-${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}/bin/weed}
  [[ -x $weed ]] || { _netfs_err "no weed at $weed: build the pinned SeaweedFS with bash tests/upstream/build.sh weed"; return; }
  have=$("$weed" version 2>/dev/null) || { _netfs_err "$weed version failed: rebuild with bash tests/upstream/build.sh weed"; return; }
  [[ $have == *" $want "* ]] || {
    _netfs_err "$weed is not the pinned SeaweedFS (commit $want): '$have'; rebuild with bash tests/upstream/build.sh weed"
    return
  }
  echo "$weed"
}

netfs_need_s3fs() {
  command -v s3fs >/dev/null || _netfs_err "s3fs is not installed: apt-get install s3fs (scripts/install-deps.sh)"
}

netfs_need_fusermount() {
  command -v fusermount3 >/dev/null || _netfs_err "fusermount3 is not installed: apt-get install fuse3 (scripts/install-deps.sh)"
}

# A capability of the machine, not a package: a container without --device /dev/fuse has none.
netfs_fuse_ok() { [[ -c /dev/fuse && -r /dev/fuse && -w /dev/fuse ]]; }

# _netfs_free_ports N: N distinct TCP ports nothing listens on, below the ephemeral range (so an
# outgoing connection does not take one between here and the bind). Racy by nature; a lost race
# is a bind error in the server's log, which seaweed_up reports.
_netfs_free_ports() {
  local n=$1 p taken picked=()
  taken=" $(ss -Htln 2>/dev/null | awk '{print $4}' | sed 's/.*://' | tr '\n' ' ') "
  while ((${#picked[@]} < n)); do
    p=$((20000 + RANDOM % 12000))
    [[ $taken == *" $p "* || " ${picked[*]} " == *" $p "* ]] && continue
    picked+=("$p")
  done
  echo "${picked[@]}"
}

# _netfs_disown PID: out of the shell's job table, so that a daemon's end (KILLed by a down) is
# not reported as "Killed" on the test's stderr; bash still reaps it.
_netfs_disown() { disown "$1" 2>/dev/null || true; }

# _netfs_alive PID: running and not a zombie.
_netfs_alive() {
  local st
  st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z ]]
}

# _netfs_owned PID STATE: PID is alive and its command line names STATE.
_netfs_owned() {
  _netfs_alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# _netfs_stop PID STATE [GRACE]: TERM, GRACE seconds (default 10), then KILL; reaps a child.
_netfs_stop() {
  local pid=$1 state=$2 grace=${3:-10} i
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if _netfs_owned "$pid" "$state"; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < grace * 10; i++)); do _netfs_alive "$pid" || break; sleep 0.1; done
    _netfs_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do _netfs_alive "$pid" || break; sleep 0.1; done
  fi
  wait "$pid" 2>/dev/null || true
}

seaweed_get() {
  local f=$1/cluster/$2
  [[ -f $f ]] || { _netfs_err "no $2 in $1 (not a cluster seaweed_up made?)"; return; }
  cat "$f"
}

_netfs_http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$@" 2>/dev/null; }

seaweed_up() {
  local state=$1; shift
  [[ -n $state ]] || { _netfs_err "seaweed_up: STATE (a directory to create) is required"; return; }
  local data="" cgroup="" vol_mb=64
  while (($#)); do
    case $1 in
      --data-dir) data=$2; shift 2 ;;
      --cgroup) cgroup=$2; shift 2 ;;
      --volume-size-mb) vol_mb=$2; shift 2 ;;
      *) _netfs_err "seaweed_up: unknown option $1"; return ;;
    esac
  done
  [[ $vol_mb =~ ^[1-9][0-9]*$ ]] || { _netfs_err "seaweed_up: --volume-size-mb must be a positive integer, got \"$vol_mb\""; return; }
  [[ -z $cgroup || -f $cgroup/cgroup.procs ]] || { _netfs_err "seaweed_up: --cgroup $cgroup has no cgroup.procs"; return; }
  local weed
  weed=$(netfs_weed) || return
  command -v curl >/dev/null || { _netfs_err "curl is not installed: apt-get install curl"; return; }
  command -v ss >/dev/null || { _netfs_err "ss is not installed: apt-get install iproute2"; return; }
  [[ ! -e $state ]] || { _netfs_err "seaweed_up: $state already exists (seaweed_down it first)"; return; }
  mkdir -p "$state/cluster" "$state/meta" "$state/mounts" "$state/home" || { _netfs_err "cannot create $state"; return; }
  state=$(cd "$state" && pwd)
  _netfs_made+=("$state")
  if [[ -z $data ]]; then
    data=$state/volumes
  else
    # Ours inside DIR, so that down removes what up made and nothing else of DIR.
    [[ -d $data ]] || { _netfs_err "seaweed_up: --data-dir $data is not a directory"; return; }
    data=$(mktemp -d "$(cd "$data" && pwd)/seaweedfs.XXXXXX") || { _netfs_err "cannot create a directory in $data"; return; }
    echo "$data" >"$state/cluster/data_dir_made"
  fi
  mkdir -p "$data" || { _netfs_err "cannot create $data"; return; }
  local ports m mg v vg f fg s sg
  ports=$(_netfs_free_ports 8)
  read -r m mg v vg f fg s sg <<<"$ports"
  local ak sk
  ak=$(head -c 10 /dev/urandom | od -An -tx1 | tr -d ' \n')
  sk=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
  (umask 077 && cat >"$state/cluster/s3.json") <<EOF
{"identities": [{"name": "iogate", "credentials": [{"accessKey": "$ak", "secretKey": "$sk"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
  local log=$state/cluster/server.log
  echo "$m" >"$state/cluster/master_port"
  echo "$v" >"$state/cluster/volume_port"
  echo "$f" >"$state/cluster/filer_port"
  # host:port.grpcport is how weed names a server whose gRPC port is not port+10000.
  echo "127.0.0.1:$f.$fg" >"$state/cluster/filer_address"
  echo "$s" >"$state/cluster/s3_port"
  echo "http://127.0.0.1:$s" >"$state/cluster/s3_url"
  echo "$ak" >"$state/cluster/access_key"
  echo "$sk" >"$state/cluster/secret_key"
  echo "$log" >"$state/cluster/log"
  # weed server's parts also talk gRPC over unix sockets named after their gRPC ports, in /tmp
  # (hard-coded): removed on a graceful stop, by seaweed_down after a KILL.
  printf '/tmp/seaweedfs-%s.sock\n' "master-grpc-$mg" "volume-grpc-$vg" "filer-grpc-$fg" "s3-grpc-$sg" \
    >"$state/cluster/sockets"
  # HOME and the working directory in STATE: weed reads master.toml, filer.toml, s3 config from
  # ., ~/.seaweedfs and /etc/seaweedfs; a machine's own must not change the test's cluster.
  # Telemetry off: the master would otherwise post to telemetry.seaweedfs.com. Iceberg and Lance
  # ports off (fixed defaults 8181, 9101 would collide between clusters). preStopSeconds 0: the
  # volume server's default 10 s wait before stopping is for a load balancer, not a test.
  # volume.max 200: volumes are sparse files, and each collection (a bucket is one) grows 7 at
  # once; the default, free space / volume size, leaves a small rig none for a bucket's.
  (
    cd "$state" || exit 1
    [[ -z $cgroup ]] || echo "$BASHPID" >"$cgroup/cgroup.procs" || exit 1
    HOME=$state/home exec "$weed" -logtostderr server -ip=127.0.0.1 -ip.bind=127.0.0.1 \
      -dir="$data" -master.dir="$state/meta" \
      -master.port="$m" -master.port.grpc="$mg" -master.telemetry=false \
      -master.volumeSizeLimitMB="$vol_mb" -volume.max=200 \
      -volume.port="$v" -volume.port.grpc="$vg" -volume.preStopSeconds=0 \
      -filer -filer.port="$f" -filer.port.grpc="$fg" -filer.localSocket="$state/cluster/filer.sock" \
      -s3 -s3.port="$s" -s3.port.grpc="$sg" -s3.port.iceberg=0 -s3.port.lance=0 \
      -s3.config="$state/cluster/s3.json" -s3.localSocket="$state/cluster/s3.sock"
  ) </dev/null >"$log" 2>&1 &
  local pid=$!
  _netfs_disown "$pid"
  echo "$pid" >"$state/cluster/pid"
  local deadline=$((SECONDS + NETFS_TIMEOUT)) what="the master on :$m"
  while ((SECONDS < deadline)); do
    _netfs_alive "$pid" || { _netfs_fail_log "$log" "weed server exited before $what answered"; return; }
    case $what in
      "the master"*)
        [[ $(_netfs_http_code "http://127.0.0.1:$m/cluster/status") == 200 ]] && what="a volume (master /dir/assign on :$m)" ;;
      "a volume"*)
        # An assignment needs a volume server that has checked in and a volume grown for it.
        curl -s -m 5 "http://127.0.0.1:$m/dir/assign" 2>/dev/null | grep -q '"fid"' && what="the filer on :$f" ;;
      "the filer"*)
        [[ $(_netfs_http_code "http://127.0.0.1:$f/") == 200 ]] && what="the S3 gateway on :$s" ;;
      "the S3"*)
        # Anonymous: 403 from a gateway that has loaded the identities.
        [[ $(_netfs_http_code "http://127.0.0.1:$s/") == 403 ]] && return 0 ;;
    esac
    sleep 0.2
  done
  _netfs_fail_log "$log" "$what did not answer within ${NETFS_TIMEOUT}s"
}

# _netfs_s3 STATE METHOD PATH [CURL ARGS...]: a signed (SigV4) request to the cluster's gateway.
_netfs_s3() {
  local state=$1 method=$2 path=$3; shift 3
  curl -sS -m 30 --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$(seaweed_get "$state" access_key):$(seaweed_get "$state" secret_key)" \
    -X "$method" "$(seaweed_get "$state" s3_url)/$path" "$@"
}

seaweed_bucket() {
  local state=$1 bucket=$2 code
  [[ $bucket =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]] || { _netfs_err "seaweed_bucket: \"$bucket\" is not an S3 bucket name"; return; }
  code=$(_netfs_s3 "$state" PUT "$bucket" -o "$state/cluster/bucket.out" -w '%{http_code}') || code="curl failed"
  [[ $code == 200 ]] || _netfs_fail_log "$state/cluster/bucket.out" "creating bucket $bucket on $(seaweed_get "$state" s3_url): HTTP $code"
}

# _netfs_mount_dir STATE MNT: the mount's record in STATE (one directory per mount point).
_netfs_mount_dir() { echo "$1/mounts/$(printf '%s' "$2" | md5sum | cut -c1-12)"; }

# _netfs_wait_mount PID LOG MNT FSTYPE WHAT: until MNT is a FSTYPE mount that answers a listing.
_netfs_wait_mount() {
  local pid=$1 log=$2 mnt=$3 fstype=$4 what=$5
  local deadline=$((SECONDS + NETFS_TIMEOUT))
  while ((SECONDS < deadline)); do
    _netfs_alive "$pid" || { _netfs_fail_log "$log" "$what exited before $mnt was mounted"; return; }
    if [[ $(findmnt -rn -o FSTYPE -M "$mnt" 2>/dev/null) == "$fstype" ]] && timeout 10 ls "$mnt" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  _netfs_fail_log "$log" "$what: $mnt is not an answering $fstype mount after ${NETFS_TIMEOUT}s"
}

# _netfs_mount_prepare STATE MNT: checks, the mount point made, the record's directory printed.
_netfs_mount_prepare() {
  local state=$1 mnt=$2 rec
  [[ -f $state/cluster/pid ]] || { _netfs_err "$state is not a SeaweedFS cluster (seaweed_up first)"; return; }
  netfs_fuse_ok || { _netfs_err "no usable /dev/fuse: this machine (or container) cannot mount FUSE file systems"; return; }
  netfs_need_fusermount || return
  [[ $mnt == /* ]] || { _netfs_err "mount point must be an absolute path, got \"$mnt\""; return; }
  ! findmnt -rn -M "$mnt" >/dev/null 2>&1 || { _netfs_err "$mnt is already a mount point"; return; }
  rec=$(_netfs_mount_dir "$state" "$mnt")
  [[ ! -e $rec ]] || { _netfs_err "$mnt is already mounted by this cluster"; return; }
  mkdir -p "$rec" || { _netfs_err "cannot create $rec"; return; }
  echo "$mnt" >"$rec/mnt"
  if [[ ! -d $mnt ]]; then
    mkdir -p "$mnt" || { _netfs_err "cannot create $mnt"; return; }
    touch "$rec/made_mnt"  # down removes the mount point it made (rmdir: only ever an empty one)
  fi
  echo "$rec"
}

weed_mount_up() {
  local state=$1 mnt=$2; shift 2
  local weed rec
  weed=$(netfs_weed) || return
  rec=$(_netfs_mount_prepare "$state" "$mnt") || return
  mkdir -p "$rec/cache"
  echo fuse.seaweedfs >"$rec/fstype"
  (
    cd "$rec" || exit 1
    HOME=$state/home exec "$weed" -logtostderr mount -filer="$(seaweed_get "$state" filer_address)" \
      -dir="$mnt" -cacheDir="$rec/cache" -localSocket="$rec/mount.sock" "$@"
  ) </dev/null >"$rec/log" 2>&1 &
  echo $! >"$rec/pid"
  _netfs_disown "$!"
  _netfs_wait_mount "$!" "$rec/log" "$mnt" fuse.seaweedfs "weed mount"
}

s3fs_up() {
  local state=$1 bucket=$2 mnt=$3; shift 3
  local rec o opts=()
  netfs_need_s3fs || return
  rec=$(_netfs_mount_prepare "$state" "$mnt") || return
  echo fuse.s3fs >"$rec/fstype"
  (umask 077 && echo "$(seaweed_get "$state" access_key):$(seaweed_get "$state" secret_key)" >"$rec/passwd")
  for o in "$@"; do opts+=(-o "$o"); done
  # -f: in the foreground, so its pid is the daemon's. passwd_file names STATE: _netfs_owned
  # recognises the process by it.
  s3fs "$bucket" "$mnt" -f -o passwd_file="$rec/passwd" -o url="$(seaweed_get "$state" s3_url)" \
    -o use_path_request_style -o dbglevel=warn "${opts[@]}" </dev/null >"$rec/log" 2>&1 &
  echo $! >"$rec/pid"
  _netfs_disown "$!"
  _netfs_wait_mount "$!" "$rec/log" "$mnt" fuse.s3fs "s3fs $bucket"
}

_netfs_umount() {  # MNT: lazily if a plain unmount is refused (busy); quiet
  local mnt=$1
  findmnt -rn -M "$mnt" >/dev/null 2>&1 || return 0
  fusermount3 -u -q "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null ||
    fusermount3 -u -z -q "$mnt" 2>/dev/null
  return 0
}

_netfs_rec_down() {  # STATE REC
  local state=$1 rec=$2 mnt=""
  [[ -f $rec/mnt ]] && mnt=$(cat "$rec/mnt")
  [[ -n $mnt ]] && _netfs_umount "$mnt"
  # Unmounted, the daemon exits on its own; TERM and KILL are for one that hangs.
  [[ -f $rec/pid ]] && _netfs_stop "$(cat "$rec/pid")" "$state" 10
  [[ -n $mnt ]] && _netfs_umount "$mnt"
  [[ -n $mnt && -f $rec/made_mnt ]] && rmdir "$mnt" 2>/dev/null
  rm -rf --one-file-system "$rec"
}

# _netfs_shielded FUNCTION ARGS...: runs a teardown in a subshell deaf to INT, TERM and HUP, so a
# second signal (ctest's timeout, a second Ctrl-C) that ends the caller in its EXIT trap does not
# cut the teardown short and leave a mount or a daemon behind; then reaps the daemons that were
# this shell's children and have ended (the subshell cannot). ARGS start with STATE.
_netfs_shielded() {
  local pids
  pids=$(cat "$2"/cluster/pid "$2"/mounts/*/pid 2>/dev/null)
  (trap '' INT TERM HUP && "$@")
  local p
  for p in $pids; do _netfs_alive "$p" || wait "$p" 2>/dev/null; done
  return 0
}

netfs_mount_down() {
  local state=$1 mnt=$2
  _netfs_shielded _netfs_rec_down "$state" "$(_netfs_mount_dir "$state" "$mnt")"
}

seaweed_down() { [[ -n $1 && -d $1 ]] || return 0; _netfs_shielded _seaweed_down "$1"; }

_seaweed_down() {
  local state=$1 rec
  state=$(cd "$state" && pwd)
  for rec in "$state"/mounts/*/; do
    [[ -d $rec ]] && _netfs_rec_down "$state" "${rec%/}"
  done
  # 3 s, not the 15 s a graceful stop takes: the filer's last metadata flush waits for a volume
  # server that has already stopped. The data is thrown away next anyway.
  if [[ -f $state/cluster/pid ]]; then
    _netfs_stop "$(cat "$state/cluster/pid")" "$state" 3
    while read -r sock; do [[ -S $sock ]] && rm -f "$sock"; done <"$state/cluster/sockets" 2>/dev/null
  fi
  [[ -f $state/cluster/data_dir_made ]] && rm -rf --one-file-system "$(cat "$state/cluster/data_dir_made")"
  # Never follow a mount that is still there (a daemon that would not let go): remove the rest.
  rm -rf --one-file-system "$state" 2>/dev/null
  return 0
}

netfs_down_all() { local s; for s in "${_netfs_made[@]}"; do seaweed_down "$s"; done; }
