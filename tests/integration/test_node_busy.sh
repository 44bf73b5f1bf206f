#!/usr/bin/env bash
# iogate node is gentle on a busy node: with fio reading the same device (an ext4 loop device), the
# agent sees the device's utilisation in /proc/diskstats, skips the probe and says why; once fio
# is gone it probes, at idle I/O priority. SIGTERM in the middle of a probe ends it promptly and
# removes the test file.
# The agent judges every block device under the path, down to the disks under a loop device's
# backing file (agent/device/device_busy.h). The image is on tmpfs, which has none, so the loop
# device is the one device judged: busy while this test loads it, idle when it does not, whatever
# the machine's own disks are doing.
source "$(dirname "$0")/lib.sh"
need_root "a loop device"
need_tool fio
need_tool mkfs.ext4

IMG=$(mktemp /dev/shm/iogate-node-busy.XXXXXX.img)
on_exit "rm -f $IMG"
MNT="$SCRATCH/mnt"
truncate -s 768M "$IMG"
LOOP=$(losetup --find --show "$IMG") || skip "no loop device available"
on_exit "losetup -d $LOOP"
# Inode tables and journal written now, not by ext4lazyinit in the background during the idle case.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"
on_exit "umount -l $MNT"
dev=$(basename "$LOOP")
"$IOGATE" detect "$MNT" --output-format json >"$SCRATCH/detect.json"
assert_jq "$SCRATCH/detect.json" "[.stack[] | recurse(.children[]?) | select(.kind != \"file\") | .name] == [\"$dev\"]" \
  "$dev is the only block device under $MNT"

policy policy 3s "min_iops: 100" >/dev/null

# A job already reading the device, as a training job would: 1 MiB reads keep the loop device busy
# all the time, 4 KiB ones only as often as fio gets the CPU back.
fio --name=job --filename="$MNT/job.dat" --size=256m --rw=randread --bs=1m --iodepth=32 --ioengine=libaio \
  --direct=1 --time_based --runtime=60 --output=/dev/null >/dev/null 2>&1 &
fio_pid=$!
on_exit "kill $fio_pid"
for _ in $(seq 100); do
  [[ -n $(pgrep -P $fio_pid 2>/dev/null) ]] && grep -q "$dev " /proc/diskstats && break
  sleep 0.1
done
sleep 3  # fio lays out its file first; let it reach the reads

set +e
"$IOGATE" node --once --no-api --policy "$SCRATCH/policy.yaml" --path "$MNT" --listen none \
  --busy-util 50% --busy-window 1s --output-format json >"$SCRATCH/busy.json" 2>"$SCRATCH/busy.log"
rc=$?
set -e
[[ $rc -eq 3 ]] || fail "busy: exit $rc, want 3 (not measured): $(tail -5 "$SCRATCH/busy.log")"
assert_jq "$SCRATCH/busy.json" ".paths[0].state == \"busy\" and .paths[0].busy_skips == 1 and .paths[0].probes == 0 and (.paths[0].detail | test(\"$dev\"))" \
  "busy: probe skipped while fio keeps $dev busy"
pass "busy: $(jq -r '.paths[0].detail' "$SCRATCH/busy.json")"
assert_jq "$SCRATCH/busy.json" '.outcome == "none" and .paths[0].measurement == null' "busy: no verdict made up"
assert_no_test_files "$MNT"

kill $fio_pid
wait $fio_pid 2>/dev/null || true
sync -f "$MNT"  # fio's file laid out and its atime: written now, not in the idle window
sleep 1
set +e
"$IOGATE" node --once --no-api --policy "$SCRATCH/policy.yaml" --path "$MNT" --listen none \
  --busy-util 50% --output-format json >"$SCRATCH/idle.json" 2>"$SCRATCH/idle.log"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "idle: exit $rc: $(tail -5 "$SCRATCH/idle.log")"
assert_jq "$SCRATCH/idle.json" '.paths[0].state == "measured" and .paths[0].probes == 1 and .outcome == "pass"' "idle device: probed"
assert_jq "$SCRATCH/idle.json" '.paths[0].io_priority | startswith("idle")' "idle device: probed at idle I/O priority"
pass "io priority: $(jq -r '.paths[0].io_priority' "$SCRATCH/idle.json")"
assert_no_test_files "$MNT"

# SIGTERM in the middle of a probe: a long run without early stop, stopped after it starts.
cat >"$SCRATCH/long.yaml" <<P
apiVersion: iogate.io/v1
kind: StoragePolicy
mode: enforce
deadline: 5m
early_stop: {enabled: false}
workload: {rw: randread, bs: 4k, iodepth: 16, numjobs: 1, runtime: 60s, size: 64m}
rules:
  - name: gpu-feed
    min_iops: 100
P
"$IOGATE" node --no-api --policy "$SCRATCH/long.yaml" --path "$MNT" --listen 127.0.0.1:0 --busy-util 100% \
  >/dev/null 2>"$SCRATCH/term.log" &
agent=$!
on_exit "kill $agent"
for _ in $(seq 200); do grep -q "probing" "$SCRATCH/term.log" && break; sleep 0.1; done
grep -q "probing" "$SCRATCH/term.log" || fail "SIGTERM: the probe never started: $(tail -3 "$SCRATCH/term.log")"
sleep 1.5
[[ -n $(find "$MNT" -name '.iogate-probe-*') ]] || fail "SIGTERM: no test file while probing (the check below would prove nothing)"
t0=$(date +%s%N)
kill -TERM $agent
code=0
for _ in $(seq 100); do kill -0 $agent 2>/dev/null || break; sleep 0.1; done
kill -0 $agent 2>/dev/null && fail "SIGTERM: still running 10 s later"
wait $agent || code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ $code -eq 0 ]] || fail "SIGTERM during a probe: exit $code, want 0"
pass "SIGTERM during a probe: exit 0 after $ms ms"
assert_no_test_files "$MNT"
