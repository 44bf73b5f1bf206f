#!/usr/bin/env bash
# Makes the Dockerfile's build base, debian:12, from Debian's packages, for a Docker Engine that
# has no such image and no registry to pull it from (these build machines). With a registry,
# `docker build` pulls the official debian:12 and this script is not needed; an image already
# tagged debian:12 (pulled or made here) is kept as it is.
#
#   scripts/base-image.sh [--force]
#
#   --force   remake the image (and its cached root file system) even if the engine has one
#
# The root file system is `debootstrap --variant=minbase bookworm` with the official image's apt
# sources (bookworm, bookworm-updates, bookworm-security), cached as a tar in
# ${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}/base so that an engine whose images were pruned
# gets it back in seconds; the image is that tar, `docker import`ed with the official image's
# PATH and CMD. About 30 s cold on these machines, nothing when the image is there. Root only.
set -euo pipefail
TAG=debian:12
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
force=false
case "${1:-}" in
  "") ;;
  --force) force=true ;;
  -h|--help) sed -n '/^#   scripts\/base-image.sh/,/^#   --force/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "base-image: unknown argument $1 (usage: scripts/base-image.sh [--force])" >&2; exit 2 ;;
esac

command -v docker >/dev/null ||
  { echo "base-image: docker is missing: apt-get install docker.io, then start the engine (systemctl start docker)" >&2; exit 1; }
docker info >/dev/null 2>&1 ||
  { echo "base-image: no Docker Engine answers on $(docker context inspect -f '{{.Endpoints.docker.Host}}' 2>/dev/null || echo /var/run/docker.sock): start it (systemctl start docker, or dockerd &)" >&2; exit 1; }
if ! $force && docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "base-image: $TAG is there ($(docker image inspect -f '{{index .Config.Labels "org.iogate.base"}}' "$TAG" | sed 's/^$/pulled/'))" >&2
  exit 0
fi

arch=$(dpkg --print-architecture)
cache=${IOGATE_TOOLS_CACHE:-/var/cache/iogate-tools}/base
tarball="$cache/debian-12-$SUITE-minbase-$arch.tar.gz"
if $force || [[ ! -s "$tarball" ]]; then
  [[ $(id -u) -eq 0 ]] || { echo "base-image: debootstrap needs root" >&2; exit 1; }
  command -v debootstrap >/dev/null ||
    { echo "base-image: debootstrap is missing: bash scripts/install-deps.sh (or apt-get install debootstrap)" >&2; exit 1; }
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.debootstrap.XXXXXX")
  # debootstrap mounts /proc and /sys into the root while it installs; a failure can leave them.
  cleanup() {
    findmnt -rn -o TARGET | grep -F "$work/" | sort -r | xargs -r umount -l 2>/dev/null || true
    rm -rf "$work"
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  echo "base-image: debootstrap --variant=minbase $SUITE from $MIRROR" >&2
  debootstrap --variant=minbase --arch "$arch" "$SUITE" "$work/root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; echo "base-image: debootstrap failed (log above)" >&2; exit 1; }
  # The official image's sources: security fixes and point-release updates, not only the release.
  rm -f "$work/root/etc/apt/sources.list"
  cat >"$work/root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$work/root/var/lib/apt/lists/"* "$work/root/var/cache/apt/"*.bin "$work/root/var/cache/apt/archives/"*.deb
  tar --numeric-owner --xattrs -C "$work/root" -czf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' \
  --change "LABEL org.iogate.base=debootstrap-$SUITE-minbase" \
  "$tarball" "$TAG" >/dev/null
echo "base-image: $TAG imported from $tarball ($(docker image inspect -f '{{.Size}}' "$TAG") bytes)" >&2
