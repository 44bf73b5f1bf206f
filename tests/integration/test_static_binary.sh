# The release binary is static and runs in an empty root that holds nothing but itself.
source "$(dirname "$0")/lib.sh"
file -L "$IOGATE" | grep -q "statically linked" || fail "not statically linked: $(file -L "$IOGATE")"
pass "file says statically linked"
need_root "chroot into an empty directory"
root="$SCRATCH/empty-root"
mkdir -p "$root"
cp "$IOGATE" "$root/iogate"
[[ $(find "$root" | wc -l) -eq 2 ]] || fail "the chroot holds more than the binary"
out=$(chroot "$root" /iogate --version)
[[ "$out" =~ ^iogate\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "unexpected --version output in chroot: $out"
pass "runs --version in an empty chroot: $out"
