# A test's scratch folder, SCRATCH, under SCRATCH_BASE (default /var/tmp), and on_exit CMD: the
# cleanups that run when the test exits, on every path, last added first, before the folder is
# removed; the test's exit status is kept. Source it once, as `source scratch.sh PREFIX` (the
# folder's name before its random part); it owns the EXIT trap.
SCRATCH_BASE=${SCRATCH_BASE:-/var/tmp}
SCRATCH=$(mktemp -d "$SCRATCH_BASE/${1:-iogate-test}.XXXXXX")
CLEANUPS=()
cleanup() {
  local rc=$?
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" >/dev/null 2>&1 || true; done
  rm -rf "$SCRATCH"
  exit $rc
}
trap cleanup EXIT
on_exit() { CLEANUPS+=("$1"); }
