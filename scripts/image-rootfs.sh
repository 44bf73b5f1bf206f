#!/usr/bin/env bash
# The image's root file system: one static, stripped /iogate, root-owned, 0755, and nothing else.
# The Dockerfile's build stage runs it (`RUN bash scripts/image-rootfs.sh /rootfs`); the final
# FROM scratch stage copies that folder.
#
#   scripts/image-rootfs.sh [--binary PATH] DIR
#
#   --binary PATH   package this iogate instead of building one with scripts/build.sh
#   DIR             where the root goes (absent or empty)
#
# ARCH=arm64 builds the arm64 binary instead (scripts/build.sh, into build-arm64/ unless BUILD_DIR
# says otherwise). An arm64 binary on an amd64 host, built so or given with --binary, is stripped
# with the cross binutils and asked its version under qemu-user.
#
# The binary's mtime is SOURCE_DATE_EPOCH, 0 unless set: the layer then depends on the binary
# alone, so one binary gives one layer digest whatever commit or clock built it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: scripts/image-rootfs.sh [--binary PATH] DIR" >&2; exit 2; }
binary="" out=""
while (($# > 0)); do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "image-rootfs: unknown flag $1" >&2; usage ;;
    *) [[ -z "$out" ]] || usage; out=$1; shift ;;
  esac
done
[[ -n "$out" ]] || usage
[[ ! -e "$out" || -z "$(ls -A "$out")" ]] || { echo "image-rootfs: $out is not empty" >&2; exit 1; }

if [[ -z "$binary" ]]; then
  # Only the binary: the image needs none of the tests.
  bash "$root/scripts/build.sh" iogate
  build_dir=${BUILD_DIR:-build${ARCH:+-$ARCH}}
  [[ "$build_dir" == /* ]] || build_dir="$root/$build_dir"
  binary="$build_dir/iogate"
fi
[[ -x "$binary" ]] || { echo "image-rootfs: $binary is not an executable" >&2; exit 1; }
# A static binary is what lets the image be FROM scratch; refuse anything else rather than ship an
# image that fails at exec with "no such file or directory" (the missing dynamic loader).
if readelf -lW "$binary" | grep -q 'INTERP'; then
  echo "image-rootfs: $binary is dynamically linked; the image holds no loader or libraries" >&2
  exit 1
fi
strip=(strip) run=()
machine=$(readelf -h "$binary" | sed -n 's/^ *Machine: *//p')
if [[ "$machine" == AArch64 && "$(uname -m)" != aarch64 ]]; then
  for tool in aarch64-linux-gnu-strip qemu-aarch64-static; do
    command -v "$tool" >/dev/null || { echo "image-rootfs: an arm64 binary needs $tool: bash scripts/install-deps.sh" >&2; exit 1; }
  done
  strip=(aarch64-linux-gnu-strip) run=(qemu-aarch64-static)
fi
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
[[ "$SOURCE_DATE_EPOCH" =~ ^[0-9]+$ ]] || { echo "image-rootfs: SOURCE_DATE_EPOCH must be seconds" >&2; exit 1; }

# Stripped here rather than at link time so that build/iogate keeps its symbols for gdb and perf;
# the image needs none (about 1.5 MB of them). USER 65532:65532 is numeric: no /etc/passwd.
mkdir -p "$out"
"${strip[@]}" --strip-all -o "$out/iogate" "$binary"
chmod 0755 "$out/iogate"
touch -d "@$SOURCE_DATE_EPOCH" "$out/iogate"
# Root owns it (COPY --from keeps the build stage's owner); the user 65532 only executes it.
if [[ $(id -u) -eq 0 ]]; then chown 0:0 "$out/iogate"; fi
version=$("${run[@]}" "$out/iogate" --version | awk 'NR == 1 { print $2 }')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "image-rootfs: iogate --version gave \"$version\"" >&2; exit 1; }
echo "image-rootfs: $out/iogate, iogate $version ($machine), $(stat -c %s "$out/iogate") bytes" >&2
