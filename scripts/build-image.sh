#!/usr/bin/env bash
# Builds the iogate image with the Docker Engine from the Dockerfile: the one way the image is
# made. Where the engine has no debian:12 (no registry, as on these build machines) it makes one
# from Debian's packages first (scripts/base-image.sh, cached).
#
#   scripts/build-image.sh [--arch arm64] [--tag TAG] [--save FILE] [-- DOCKER_BUILD_FLAGS...]
#
#   --arch arm64  the arm64 image (GH200, GB200 nodes) instead of the host's: linux/arm64, tagged
#                 iogate:<version>-arm64 by default. Its binary is cross-built here (ARCH=arm64
#                 scripts/build.sh, into BUILD_DIR or build-arm64/), not in the Dockerfile's build stage
#   --tag TAG     the image's name (default iogate:<the project's version>)
#   --save FILE   also write it as a `docker save` archive, which `ctr -n k8s.io images import`,
#                 `kind load image-archive` and `docker load` read
#
# It passes the labels' build arguments: REVISION (git HEAD), CREATED (the last commit's time),
# VERSION (CMakeLists.txt's project version). Prints the image ID last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(iogate VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
tag="" save="" arch="" extra=()
while (($# > 0)); do
  case "$1" in
    --arch)
      arch=${2:?--arch needs an architecture}; shift 2
      [[ "$arch" == arm64 ]] || { echo "build-image: --arch $arch: only arm64 (the host's image needs no --arch)" >&2; exit 2; } ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --save) save=${2:?--save needs a file}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '/^#   scripts\/build-image.sh/,/^#                 `kind load/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown argument $1 (scripts/build-image.sh --help)" >&2; exit 2 ;;
  esac
done

epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
labels=(--build-arg VERSION="$version" --build-arg REVISION="$revision"
  --build-arg CREATED="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)")
if [[ -z "$arch" ]]; then
  tag=${tag:-iogate:$version}
  bash "$root/scripts/base-image.sh"
  # The classic builder: this engine's client has no buildx, and the Dockerfile needs nothing more.
  docker build -t "$tag" -f "$root/Dockerfile" "${labels[@]}" "${extra[@]}" "$root" >&2
else
  tag=${tag:-iogate:$version-$arch}
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  ARCH=$arch bash "$root/scripts/image-rootfs.sh" "$context/rootfs" >&2
  # The Dockerfile's final stage (FROM scratch, its labels, user and entrypoint), its one COPY
  # taking the root from this context instead of the build stage: the classic builder runs every
  # stage before its target, and the build stage would compile the amd64 binary and, under
  # --platform linux/arm64, want an arm64 debian:12 from a registry.
  final=$(sed -n '/^FROM scratch$/,$p' "$root/Dockerfile")
  [[ $(grep -cx 'COPY --from=build /rootfs/ /' <<<"$final") -eq 1 ]] ||
    { echo "build-image: the Dockerfile's final stage no longer has the one line COPY --from=build /rootfs/ /" >&2; exit 1; }
  sed 's|^COPY --from=build /rootfs/ /$|COPY rootfs/ /|' <<<"$final" >"$context/Dockerfile"
  docker build --platform "linux/$arch" -t "$tag" -f "$context/Dockerfile" "${labels[@]}" "${extra[@]}" "$context" >&2
fi
if [[ -n "$save" ]]; then
  docker save -o "$save" "$tag"
  echo "build-image: $tag saved to $save" >&2
fi
echo "build-image: $tag, $(docker image inspect -f '{{.Size}}' "$tag") bytes" >&2
docker image inspect -f '{{.Id}}' "$tag"
