#!/usr/bin/env bash
# Builds the iogate image with the Docker Engine from the Dockerfile: the one way the image is
# made. Where the engine has no debian:12 (no registry, as on these build machines) it makes one
# from Debian's packages first (scripts/base-image.sh, cached).
#
#   scripts/build-image.sh [--tag TAG] [--save FILE] [-- DOCKER_BUILD_FLAGS...]
#
#   --tag TAG     the image's name (default iogate:<the project's version>)
#   --save FILE   also write it as a `docker save` archive, which `ctr -n k8s.io images import`,
#                 `kind load image-archive` and `docker load` read
#
# It passes the labels' build arguments: REVISION (git HEAD), CREATED (the last commit's time),
# VERSION (CMakeLists.txt's project version). Prints the image ID last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(iogate VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
tag="iogate:$version" save="" extra=()
while (($# > 0)); do
  case "$1" in
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --save) save=${2:?--save needs a file}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '/^#   scripts\/build-image.sh/,/^#                 `kind load/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown argument $1 (scripts/build-image.sh --help)" >&2; exit 2 ;;
  esac
done

bash "$root/scripts/base-image.sh"
epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
# The classic builder: this engine's client has no buildx, and the Dockerfile needs nothing more.
docker build -t "$tag" -f "$root/Dockerfile" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  --build-arg CREATED="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)" \
  "${extra[@]}" "$root" >&2
if [[ -n "$save" ]]; then
  docker save -o "$save" "$tag"
  echo "build-image: $tag saved to $save" >&2
fi
echo "build-image: $tag, $(docker image inspect -f '{{.Size}}' "$tag") bytes" >&2
docker image inspect -f '{{.Id}}' "$tag"
