# iogate on real network file systems: a SeaweedFS cluster (the pinned weed of tests/upstream),
# its filer through `weed mount` (fuse.seaweedfs) and a bucket of its S3 gateway through s3fs-fuse
# (fuse.s3fs), all brought up and torn down by tests/lib/netfs.sh. A tree written through one
# mount is read back, byte for byte, through the other (and a file the other way), so both are
# real views of one server. detect calls each mount network-fs with its FUSE type; a dataset probe
# reads the tree through each with no error. Teardown leaves no mount and no daemon.
source "$(dirname "$0")/lib.sh"
source "$TESTS_DIR/lib/netfs.sh"
need_tool curl
need_tool ss
netfs_weed >/dev/null || fail "the pinned SeaweedFS is needed (see above)"
netfs_need_s3fs || fail "s3fs is needed (see above)"
netfs_need_fusermount || fail "fusermount3 is needed (see above)"
netfs_fuse_ok || skip "no usable /dev/fuse: this machine cannot mount FUSE file systems"

state=$SCRATCH/netfs
weed_mnt=$SCRATCH/weed
s3_mnt=$SCRATCH/s3
on_exit "seaweed_down '$state'"
seaweed_up "$state" || fail "the SeaweedFS cluster did not come up"
pass "weed server up: S3 at $(seaweed_get "$state" s3_url), filer :$(seaweed_get "$state" filer_port)"
seaweed_bucket "$state" data || fail "bucket 'data' not created"
weed_mount_up "$state" "$weed_mnt" || fail "weed mount did not come up"
s3fs_up "$state" data "$s3_mnt" || fail "s3fs did not come up"
for m in "$weed_mnt" "$s3_mnt"; do
  echo "mountinfo: $(awk -v m="$m" '$5 == m' /proc/self/mountinfo)"
done
[[ $(findmnt -rn -o FSTYPE -M "$weed_mnt") == fuse.seaweedfs ]] || fail "$weed_mnt is not fuse.seaweedfs"
[[ $(findmnt -rn -o FSTYPE -M "$s3_mnt") == fuse.s3fs ]] || fail "$s3_mnt is not fuse.s3fs"
pass "mounted: $weed_mnt (fuse.seaweedfs), $s3_mnt (fuse.s3fs)"

# A small tree on the local disk: files of 0 B to 5 MiB (over weed mount's 2 MiB chunks), in
# nested directories. A bucket is the filer's /buckets/NAME, so the weed mount writes into it.
src=$SCRATCH/src
mkdir -p "$src/a/b" "$src/c"
head -c 0 /dev/urandom >"$src/empty"
for i in 1 2 3 4 5 6; do head -c $((i * 37 * 1024 + i)) /dev/urandom >"$src/a/f$i"; done
for i in 1 2 3 4; do head -c $((i * 4096)) /dev/urandom >"$src/a/b/g$i"; done
head -c $((5 * 1024 * 1024 + 7)) /dev/urandom >"$src/c/big"
nfiles=$(find "$src" -type f | wc -l)
cp -r "$src" "$weed_mnt/buckets/data/tree" || fail "cp of the tree into the weed mount failed"
diff -r "$src" "$weed_mnt/buckets/data/tree" >/dev/null || fail "the tree read back through the weed mount differs"
pass "$nfiles files written through weed mount, read back through it"
diff -r "$src" "$s3_mnt/tree" >"$SCRATCH/diff.out" 2>&1 || fail "the tree through s3fs differs: $(head -3 "$SCRATCH/diff.out")"
pass "the same $nfiles files read through s3fs, byte for byte"

# The other way: an object written through s3fs shows in the weed mount. weed mount learns of
# the filer's changes through its metadata subscription, asynchronously: wait for it.
head -c 300000 /dev/urandom >"$SCRATCH/back"
cp "$SCRATCH/back" "$s3_mnt/from-s3fs" || fail "a write through s3fs failed"
for ((i = 0; i < 100; i++)); do
  cmp -s "$SCRATCH/back" "$weed_mnt/buckets/data/from-s3fs" && break
  sleep 0.1
done
cmp "$SCRATCH/back" "$weed_mnt/buckets/data/from-s3fs" || fail "the file written through s3fs is not in the weed mount after 10 s"
pass "a file written through s3fs read back through weed mount"

# detect: each mount, and a directory inside it, is network-fs with its FUSE type.
out=$SCRATCH/d.json
"$IOGATE" detect "$weed_mnt/buckets/data/tree/a" --output-format json >"$out"
assert_jq "$out" '.class == "network-fs" and .mount.fstype == "fuse.seaweedfs"' "weed mount: network-fs, fuse.seaweedfs"
# weed names the mount after the -filer address it was given (host:port.grpcport) and the path.
assert_jq "$out" ".mount.point == \"$weed_mnt\" and .mount.source == \"$(seaweed_get "$state" filer_address):/\"" \
  "weed mount: its mount point, and the filer it mounts as the source"
filer=$(seaweed_get "$state" filer_address)
assert_jq "$out" ".network.backend == \"seaweedfs\" and .network.servers == [\"${filer%.*}\"]" \
  "weed mount: backend seaweedfs, the filer ${filer%.*} as its server"
"$IOGATE" detect "$s3_mnt" --output-format json >"$out"
assert_jq "$out" '.class == "network-fs" and .mount.fstype == "fuse.s3fs" and .mount.source == "s3fs" and .network.backend == "s3fs"' \
  "s3fs: network-fs, fuse.s3fs, backend s3fs"

# A dataset probe reads every file of the tree, through each mount, without an error.
for m in "$weed_mnt/buckets/data/tree" "$s3_mnt/tree"; do
  out=$SCRATCH/p.json
  "$IOGATE" probe --mode dataset "$m" --workers 1,2 --runtime 2s --output-format json >"$out" ||
    fail "probe --mode dataset $m failed"
  assert_jq "$out" ".dataset.files_exact == true and .dataset.files_estimate == $nfiles" "$m: the walk counted $nfiles files"
  assert_jq "$out" '.loader.sweep | all(.files_read > 0 and .errors == 0)' "$m: files read, no error"
  assert_jq "$out" '.storage.class == "network-fs"' "$m: the report says network-fs"
done

# An up that cannot succeed fails promptly, names what failed, and leaves nothing mounted.
err=$SCRATCH/err
NETFS_TIMEOUT=30 s3fs_up "$state" no-such-bucket "$SCRATCH/s3-bad" 2>"$err" && fail "s3fs of a missing bucket came up"
head -1 "$err" | grep -q "s3fs no-such-bucket" || fail "the error does not name s3fs and the bucket: $(head -1 "$err")"
pass "s3fs of a missing bucket: $(head -1 "$err")"
netfs_mount_down "$state" "$SCRATCH/s3-bad"

# Teardown: nothing mounted, no daemon, no state, none of weed's sockets in /tmp; a second down
# is harmless.
mapfile -t sockets <"$state/cluster/sockets"
((${#sockets[@]} == 4)) && [[ -S ${sockets[0]} ]] || fail "weed's gRPC sockets are not where netfs.sh looks: ${sockets[*]}"
seaweed_down "$state"
left=$(awk -v s="$SCRATCH" 'index($5, s) == 1' /proc/self/mountinfo)
[[ -z $left ]] || fail "mounts left after seaweed_down: $left"
left=$(pgrep -af -- "$state" || true)
[[ -z $left ]] || fail "processes left after seaweed_down: $left"
[[ ! -e $state ]] || fail "$state left after seaweed_down"
for sock in "${sockets[@]}"; do [[ ! -e $sock ]] || fail "$sock left after seaweed_down"; done
seaweed_down "$state" || fail "a second seaweed_down failed"
pass "torn down: no mount, no weed or s3fs process, no state or socket left; a second down is a no-op"
