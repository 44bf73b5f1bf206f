# The engine agrees with the real fio on the same file and parameters, run back to back, and
# its own figures are self-consistent (Little's law). Loose bounds: this checks that iogate
# measures the same thing as fio, not speed; bench/parity.sh measures the ratios. The peer is
# fio with its defaults, which refill each completion at once as iogate does by default.
#
# At QD16 fio runs at the depth iogate actually held in the kernel (its mean_in_flight, rounded).
# This VM disk answers fewer I/Os in flight disproportionately faster: on one day, iogate at
# --iodepth 16 held 11.5 in the kernel (the rest awaiting their refill's io_submit) and read
# 2x what fio read holding 15.4, while fio at iodepth 11-12 read what iogate read (47.2k vs
# 47.4k, 51.4k vs 51.2k). Compared at the same depth in the kernel, the two measure the same
# device; how much of the nominal depth iogate holds is printed, and must be most of it.
source "$(dirname "$0")/lib.sh"
need_tool fio
"$IOGATE" probe "$SCRATCH" --size 256m --keep-file --runtime 200ms --ramp 0 >/dev/null
file=$(ls "$SCRATCH"/.iogate-probe-*.dat)
# The disk under /var/tmp is a VM's, cached by its host, and the machine is shared: one pair of
# runs can land 40% apart with nothing wrong. A pair is retried (up to three, back to back); a
# real disagreement (another block size, the page cache, a wrong count) fails all three.
for depth in 1 16; do
  agreed=""
  tries=()
  for attempt in 1 2 3; do
    "$IOGATE" probe "$file" --iodepth $depth --runtime 3s --ramp 500ms --output-format json >"$SCRATCH/i.json"
    held=$(jq '[.jobs[0].mean_in_flight + 0.5 | floor, 1] | max' "$SCRATCH/i.json")
    fio --name=t --filename="$file" --rw=randread --bs=4k --iodepth=$held --ioengine=libaio --direct=1 \
      --runtime=3 --time_based --ramp_time=500ms --invalidate=1 --output-format=json >"$SCRATCH/f.json" 2>/dev/null
    gi=$(jq '.aggregate.read.iops' "$SCRATCH/i.json")
    fi=$(jq '.jobs[0].read.iops' "$SCRATCH/f.json")
    tries+=("iogate $gi (holding $held of $depth in the kernel) vs fio $fi at iodepth $held")
    if awk -v g="$gi" -v f="$fi" 'BEGIN { r = g / f; exit !(r > 0.6 && r < 1.6) }'; then
      agreed=yes
      break
    fi
  done
  [[ -n $agreed ]] || fail "QD$depth: iogate and fio IOPS outside [0.6, 1.6] in every try: ${tries[*]}"
  pass "QD$depth: ${tries[-1]} (try $attempt${tries[1]:+; earlier: ${tries[0]}})"
  # A refill path that left most slots waiting would hold a fraction of the depth: not measured
  # at the depth asked for, whatever fio says at that fraction.
  assert_jq "$SCRATCH/i.json" '.jobs[0].mean_in_flight >= '$depth' * 0.6' \
    "QD$depth: iogate held $(jq -r '.jobs[0].mean_in_flight * 10 | round / 10' "$SCRATCH/i.json") of $depth I/Os in the kernel (at least 60%)"
  # Little's law: every slot is either in the kernel (IOPS × mean latency) or awaiting its refill,
  # so the two add up to iodepth when the timestamps and the window cover each slot's whole cycle.
  assert_jq "$SCRATCH/i.json" '.jobs[0] | (.mean_in_flight - .read.iops * .read.clat_ns.mean / 1e9 | fabs) < 0.01 * '$depth'
    and (.mean_in_flight + .mean_awaiting_refill) > '$depth' * 0.97 and (.mean_in_flight + .mean_awaiting_refill) < '$depth' * 1.02' \
    "QD$depth: $(jq -r '.jobs[0] | "\(.mean_in_flight * 10 | round / 10) in the kernel + \(.mean_awaiting_refill * 10 | round / 10) awaiting refill"' "$SCRATCH/i.json") ≈ $depth slots"
done
