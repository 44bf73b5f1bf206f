# Bad input: one clear line naming the flag, exit 2; a missing path is a usage error too.
source "$(dirname "$0")/lib.sh"
expect_usage "--bs" probe "$SCRATCH" --bs 4q
expect_usage "--bs" probe "$SCRATCH" --bs 1000 --size 16m --runtime 1s
expect_usage "--iodepth" probe "$SCRATCH" --iodepth 0
expect_usage "--iodepth" probe "$SCRATCH" --iodepth lots
expect_usage "--iodepth-batch: must be in \[1, --iodepth (8)\], got 16" probe "$SCRATCH" --iodepth 8 --iodepth-batch 16
expect_usage "--iodepth-batch" probe "$SCRATCH" --iodepth-batch 0
expect_usage "--rw" probe "$SCRATCH" --rw randomread
expect_usage "--runtime" probe "$SCRATCH" --runtime 10x
expect_usage "--size" probe "$SCRATCH" --size big
expect_usage "--direct" probe "$SCRATCH" --direct maybe
expect_usage "--output-format" probe "$SCRATCH" --output-format yaml
expect_usage "--tolerance" probe "$SCRATCH" --early-stop --tolerance 3
expect_usage "--tolerance" probe "$SCRATCH" --early-stop --tolerance 0%
expect_usage "--min-iops" probe "$SCRATCH" --min-iops 10000
expect_usage "--min-iops" probe "$SCRATCH" --early-stop --min-iops fast
expect_usage "PATH" probe
expect_usage "PATH" probe "$SCRATCH/does-not-exist"
expect_usage "unrecognised\|unknown" probe "$SCRATCH" --frobnicate
expect_usage "unknown command" frobnicate
"$IOGATE" probe --help | grep -q -- "--iodepth" || fail "probe --help lacks --iodepth"
pass "probe --help lists the flags"

# --root names a tree with a mount table, or every mode refuses it at once (probe once measured
# and reported class "unknown" with exit 0, while detect exited 3).
expect_usage "^iogate probe: --root: $SCRATCH/no-root holds no proc/1/mountinfo" probe "$SCRATCH" --root "$SCRATCH/no-root"
expect_usage "^iogate probe: --root: " probe "$SCRATCH" --mode dataset --root "$SCRATCH/no-root"
expect_usage "^iogate detect: --root: " detect "$SCRATCH" --root "$SCRATCH/no-root"
expect_usage "^iogate preflight: --root: " preflight "$SCRATCH" --policy profile:training --no-api --root "$SCRATCH/no-root"
expect_usage "^iogate node: --root: " node --path "data=$SCRATCH" --policy profile:training --no-api --once --root "$SCRATCH/no-root"
