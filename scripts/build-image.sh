#!/usr/bin/env bash
# Builds the iogate container image without a container engine: the same image the Dockerfile makes
# (one static, stripped /iogate FROM scratch), written as an OCI image layout that skopeo, umoci,
# podman, containerd (ctr import) and docker load (25+, from --oci-archive) read.
#
#   scripts/build-image.sh [--binary PATH] [--rootfs DIR] [--oci DIR] [--oci-archive FILE]
#
#   --binary PATH        package this already built iogate instead of building one with
#                        scripts/build.sh (the tests pass ctest's binary, so that they never build
#                        into the build directory that ctest is running from)
#   --rootfs DIR         assemble the image's root file system into DIR (absent or empty): what the
#                        Dockerfile's build stage does before `COPY --from=build /rootfs/ /`
#   --oci DIR            write the OCI image layout into DIR (absent or empty)
#   --oci-archive FILE   the same layout as one tar file
#
# With none of the output options it writes the layout to build/image/oci. Reproducible: the layer
# and config carry SOURCE_DATE_EPOCH (default: the last commit's time) as their only time stamp, so
# the same binary gives the same image digest, which it prints last.
# Labels from the environment, each omitted when empty: IOGATE_IMAGE_SOURCE (repository URL),
# IOGATE_IMAGE_LICENSES (SPDX expression); IOGATE_IMAGE_REVISION defaults to `git rev-parse HEAD`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '/^#   scripts\/build-image.sh/,/^#   --oci-archive/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
binary="" rootfs_out="" oci_out="" archive_out=""
while (($# > 0)); do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --rootfs) rootfs_out=${2:?--rootfs needs a directory}; shift 2 ;;
    --oci) oci_out=${2:?--oci needs a directory}; shift 2 ;;
    --oci-archive) archive_out=${2:?--oci-archive needs a file}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "build-image: unknown argument $1" >&2; usage ;;
  esac
done
# build.sh's BUILD_DIR: relative to the repository, or absolute.
build_dir=${BUILD_DIR:-build}
[[ "$build_dir" == /* ]] || build_dir="$root/$build_dir"
if [[ -z "$rootfs_out$oci_out$archive_out" ]]; then oci_out="$build_dir/image/oci"; rm -rf "$oci_out"; fi

# Outputs must not already hold something: the layer is exactly what this script puts there.
for d in "$rootfs_out" "$oci_out"; do
  [[ -z "$d" || ! -e "$d" || -z "$(ls -A "$d")" ]] || { echo "build-image: $d is not empty" >&2; exit 1; }
done

if [[ -z "$binary" ]]; then
  # Only the binary: the image needs neither the tests nor the test API server.
  bash "$root/scripts/build.sh" iogate
  binary="$build_dir/iogate"
fi
[[ -x "$binary" ]] || { echo "build-image: $binary is not an executable" >&2; exit 1; }
# A static binary is what lets the image be FROM scratch; refuse anything else rather than ship an
# image that fails at exec with "no such file or directory" (the missing dynamic loader).
if readelf -lW "$binary" | grep -q 'INTERP'; then
  echo "build-image: $binary is dynamically linked; the image holds no loader or libraries" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# SOURCE_DATE_EPOCH: the time of the last commit, so that rebuilding one commit gives one digest.
# The Dockerfile's build stage has no .git (.dockerignore) and passes it as a build argument.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi
[[ "$SOURCE_DATE_EPOCH" =~ ^[0-9]+$ ]] || { echo "build-image: SOURCE_DATE_EPOCH must be seconds" >&2; exit 1; }

# The root file system: /iogate and nothing else. Stripped here rather than at link time so that
# build/iogate keeps its symbols for gdb and perf; the image needs none (about 1.5 MB of them).
# USER 65532:65532 is numeric, so no /etc/passwd is needed: nothing in iogate looks up a user name.
rootfs="$work/rootfs"
mkdir -p "$rootfs"
strip --strip-all -o "$rootfs/iogate" "$binary"
chmod 0755 "$rootfs/iogate"
touch -d "@$SOURCE_DATE_EPOCH" "$rootfs/iogate"
# Root owns it (COPY --from keeps the build stage's owner, root); the user 65532 only executes it.
if [[ $(id -u) -eq 0 ]]; then chown 0:0 "$rootfs/iogate"; fi

version=$("$rootfs/iogate" --version | awk 'NR == 1 { print $2 }')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "build-image: iogate --version gave \"$version\"" >&2; exit 1; }

if [[ -n "$rootfs_out" ]]; then
  mkdir -p "$rootfs_out"
  cp -a "$rootfs/." "$rootfs_out/"
  echo "build-image: root file system in $rootfs_out (iogate $version)" >&2
fi
[[ -n "$oci_out$archive_out" ]] || exit 0

# --- OCI image layout (image-spec v1.0: oci-layout, index.json, blobs/sha256/) ---

# JSON string literal; the values here are plain text, but a quote or backslash must not break it.
json_str() {
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}
layout="$work/layout"
mkdir -p "$layout/blobs/sha256"
# put_blob FILE: moves FILE into the blob store; sets blob_digest ("sha256:<hex>") and blob_size.
put_blob() {
  local hex
  hex=$(sha256sum "$1" | cut -d' ' -f1)
  blob_digest="sha256:$hex"
  blob_size=$(stat -c %s "$1")
  mv "$1" "$layout/blobs/sha256/$hex"
}

# The layer: a tar with fixed order, owner, mode and time, so that its bytes (and digest) depend
# on the binary alone. ustar: no pax headers carrying atime/ctime. gzip -n: no name or time stamp.
tar --create --file="$work/layer.tar" --directory="$rootfs" --format=ustar --sort=name \
  --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" iogate
diff_id="sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
layer_tar_size=$(stat -c %s "$work/layer.tar")
gzip -9 -n -c "$work/layer.tar" >"$work/layer.tar.gz"
put_blob "$work/layer.tar.gz"; layer_digest=$blob_digest layer_size=$blob_size

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
revision=${IOGATE_IMAGE_REVISION:-$(git -C "$root" rev-parse HEAD 2>/dev/null || true)}
# Docker's and the OCI spec's names for the architecture agree for amd64 and arm64 with Debian's.
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$arch" in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac

labels=()
add_label() { [[ -z "$2" ]] || labels+=("$(json_str "org.opencontainers.image.$1"):$(json_str "$2")"); }
# The same labels as the Dockerfile's LABEL (tests/integration/test_image.sh compares them).
add_label title "iogate"
add_label description "Storage benchmark and Kubernetes agent: probes the storage behind a path and gates GPU workloads on a storage policy"
add_label version "$version"
add_label revision "$revision"
add_label created "$created"
add_label source "${IOGATE_IMAGE_SOURCE:-}"
add_label licenses "${IOGATE_IMAGE_LICENSES:-}"
labels_json=$(IFS=,; echo "{${labels[*]}}")

# Env and WorkingDir as BuildKit writes them for a FROM scratch image (its default PATH, /), so
# that the Dockerfile's image and this one have the same config. iogate needs neither: the entry
# point is an absolute path and it runs nothing else.
printf '{"created":%s,"architecture":%s,"os":"linux","config":{"User":"65532:65532","Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":["/iogate"],"WorkingDir":"/","Labels":%s},"rootfs":{"type":"layers","diff_ids":[%s]},"history":[{"created":%s,"created_by":"scripts/build-image.sh: COPY /iogate"}]}' \
  "$(json_str "$created")" "$(json_str "$arch")" "$labels_json" "$(json_str "$diff_id")" "$(json_str "$created")" \
  >"$work/config.json"
put_blob "$work/config.json"; config_digest=$blob_digest config_size=$blob_size

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%s,"size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":%s,"size":%s}],"annotations":%s}' \
  "$(json_str "$config_digest")" "$config_size" "$(json_str "$layer_digest")" "$layer_size" "$labels_json" \
  >"$work/manifest.json"
put_blob "$work/manifest.json"; manifest_digest=$blob_digest manifest_size=$blob_size

# ref.name is the tag: `skopeo copy oci:DIR:<version> ...`, and what `docker load` names it.
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":%s,"size":%s,"platform":{"architecture":%s,"os":"linux"},"annotations":{"org.opencontainers.image.ref.name":%s}}]}' \
  "$(json_str "$manifest_digest")" "$manifest_size" "$(json_str "$arch")" "$(json_str "$version")" \
  >"$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

if [[ -n "$oci_out" ]]; then
  mkdir -p "$oci_out"
  cp -a "$layout/." "$oci_out/"
fi
if [[ -n "$archive_out" ]]; then
  # Deterministic as the layer is: the archive's digest is as reproducible as the image's.
  tar --create --file="$archive_out" --directory="$layout" --format=ustar --sort=name \
    --owner=0 --group=0 --numeric-owner --mode=go-w,a+rX --mtime="@$SOURCE_DATE_EPOCH" \
    oci-layout index.json blobs
fi
echo "build-image: iogate $version ($arch): layer $layer_tar_size bytes, $layer_size gzipped;" \
  "layout in ${oci_out:-$archive_out}" >&2
echo "$manifest_digest"
