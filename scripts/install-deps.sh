#!/usr/bin/env bash
# Installs everything iogate needs to build, test and benchmark, from Debian packages only.
# Idempotent: packages already present are skipped, so it is cheap to run before every build.
# Used by README.md, .ci/run and the Dockerfile.
set -euo pipefail

build_packages=(
  g++ cmake make pkg-config file
  libaio-dev libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libboost-program-options-dev doctest-dev libssl-dev libyaml-cpp-dev dpkg-dev xz-utils
)
# Real peers and tools the integration tests and benchmarks drive. clang builds the libFuzzer
# targets, whose runtime (libclang_rt.fuzzer) is in libclang-rt-14-dev. debootstrap makes the
# image's build base where no registry gives one (scripts/base-image.sh); python3-yaml reads the
# chart's renderings in the deployment and container tests.
test_packages=(fio jq util-linux e2fsprogs coreutils procps clang libclang-rt-14-dev curl openssl prometheus
  debootstrap python3-yaml
  # The deployment tests lint YAML; their Go (check-manifests, the pinned upstream tools) needs
  # Go >= 1.26, which Debian 12 does not package (checked below).
  yamllint
  # lint.format checks the C++ against .clang-format.
  clang-format
  # Tests and benchmarks only: the real PyTorch DataLoader that iogate's predicted accelerator
  # utilisation is checked against (tests/lib/dataloader_au.py, tests/integration/test_au_verdict.sh).
  # Debian's CPU build; run it with /usr/bin/python3, not a pyenv or venv python.
  python3-torch
  # The network file system tests (tests/lib/netfs.sh): s3fs-fuse mounts a bucket of the test's
  # SeaweedFS (built by tests/upstream, not packaged); fuse3's fusermount3 unmounts it and
  # `weed mount`. iproute2's ss finds free ports for the cluster.
  s3fs fuse3 iproute2
  # The e2e node's pod network (tests/e2e/node_lib.sh): the bridge, host-local and loopback CNI
  # plugins, in /usr/lib/cni. Its containerd and runc are the Docker Engine's (docker.io below).
  containernetworking-plugins
  # A FUSE network file system the dataset tests run on (tests/lib/sshfs.sh): sshfs, over a
  # loopback OpenSSH server whose disk is a capped rig volume.
  sshfs openssh-server
  # arm64 (GH200, GB200 nodes): the cross compiler (scripts/build.sh with ARCH=arm64) and qemu-user,
  # which runs the cross-built unit tests and iogate (ctest build.arm64: qemu-aarch64-static) and,
  # registered in binfmt_misc by binfmt-support (below), the arm64 image under the Docker Engine.
  g++-aarch64-linux-gnu qemu-user-static binfmt-support
  # A registry on loopback (Debian's Distribution registry), where container.arm64 joins the amd64
  # and arm64 images into one tag with docker manifest, as the manual tells users to.
  docker-registry
  # The arm64 static archives the cross build links, installed beside the amd64 ones (multiarch:
  # dpkg --add-architecture arm64, below). Multi-Arch: same packages must be at the same version
  # for both architectures, so apt may upgrade the amd64 ones with them. yaml-cpp is not Multi-Arch:
  # same (its arm64 package would replace the amd64 one): its archive is unpacked below instead.
  libaio-dev:arm64 libssl-dev:arm64 libboost-program-options-dev:arm64)

want=("${build_packages[@]}")
if [[ "${1:-}" != "--build-only" ]]; then
  want+=("${test_packages[@]}")
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

# arm64 packages (NAME:arm64) come from the same sources once dpkg knows the architecture; the
# install below then runs apt-get update, as the arm64 packages are missing.
if [[ "${1:-}" != "--build-only" ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install-deps: dpkg --add-architecture arm64 (the cross build's libraries)" >&2
  $SUDO dpkg --add-architecture arm64
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  # --no-remove: a package of one architecture never replaces the other's.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends --no-remove "${missing[@]}" >/dev/null
fi

# Go >= 1.26 at /usr/local/go: tests/deploy/build_tools.sh (check-manifests) and
# tests/upstream/build.sh (kube-apiserver, kubectl, etcd, helm) build with it. Debian 12's
# golang-go is 1.19, too old, so it is neither installed nor used: Go is the official release.
if [[ "${1:-}" != "--build-only" ]]; then
  source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/go.sh"
  if ! find_go >/dev/null 2>&1; then
    echo "install-deps: FAIL: the tests need $(find_go 2>&1)" >&2
    exit 1
  fi
fi

# The Docker Engine builds and runs the image (tests/container). Debian's docker.io where no
# docker command exists; the engine itself is a service the machine starts, so a stopped one is
# named here and fails the container tests, not the build.
if [[ "${1:-}" != "--build-only" ]]; then
  if ! command -v docker >/dev/null; then
    echo "install-deps: installing docker.io" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  fi
  docker info >/dev/null 2>&1 ||
    echo "install-deps: WARNING: no Docker Engine answers; the container tests will fail: systemctl start docker (or dockerd &)" >&2
fi

# cpp-httplib, header-only. Debian's libcpp-httplib-dev splits the library into a header and a
# shared object and ships no static archive, so a static iogate cannot link it. The same Debian
# source package (with Debian's security patches applied by dpkg-source) carries upstream's
# single-header httplib.h; it goes to third_party/ (git-ignored), at the version of the -dev package.
httplib_version=$(dpkg-query -W -f='${Version}' libcpp-httplib-dev)
httplib_dir=third_party/cpp-httplib
if [[ "$(cat "$httplib_dir/VERSION" 2>/dev/null)" != "$httplib_version" ]]; then
  echo "install-deps: fetching the cpp-httplib $httplib_version source package for its single header" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "deb-src http://deb.debian.org/debian bookworm main" > "$work/sources.list"
  echo "deb-src http://deb.debian.org/debian-security bookworm-security main" >> "$work/sources.list"
  apt_src=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  apt-get "${apt_src[@]}" update -qq
  (cd "$work" && apt-get "${apt_src[@]}" source -qq "cpp-httplib=$httplib_version" >/dev/null)
  header=$(find "$work" -maxdepth 2 -name httplib.h -path '*cpp-httplib-*' | head -1)
  [[ -n "$header" ]] || { echo "install-deps: httplib.h not found in the cpp-httplib source package" >&2; exit 1; }
  mkdir -p "$httplib_dir"
  cp "$header" "$httplib_dir/httplib.h"
  cp "$(dirname "$header")/LICENSE" "$httplib_dir/LICENSE"
  echo "$httplib_version" > "$httplib_dir/VERSION"
fi

# arm64's libyaml-cpp.a for the cross build (cmake/aarch64-linux-gnu.cmake). libyaml-cpp-dev is not
# Multi-Arch: same, so its arm64 package cannot be installed beside the amd64 one: its static
# archive alone is unpacked from the arm64 package, at the amd64 package's version (both builds
# compile against the host's headers), into third_party/arm64/ (git-ignored).
if [[ "${1:-}" != "--build-only" ]]; then
  yaml_version=$(dpkg-query -W -f='${Version}' libyaml-cpp-dev)
  arm64_dir="$(dirname "${BASH_SOURCE[0]}")/../third_party/arm64"
  if [[ "$(cat "$arm64_dir/VERSION" 2>/dev/null)" != "$yaml_version" ]]; then
    echo "install-deps: unpacking libyaml-cpp.a from libyaml-cpp-dev:arm64 $yaml_version" >&2
    arm64_work=$(mktemp -d)
    (cd "$arm64_work" && apt-get -o APT::Sandbox::User=root download -qq "libyaml-cpp-dev:arm64=$yaml_version") ||
      { echo "install-deps: apt-get download libyaml-cpp-dev:arm64=$yaml_version failed: apt-get update, or upgrade libyaml-cpp-dev to a version the archive has" >&2; exit 1; }
    dpkg-deb --fsys-tarfile "$arm64_work"/libyaml-cpp-dev_*_arm64.deb |
      tar -x -C "$arm64_work" ./usr/lib/aarch64-linux-gnu/libyaml-cpp.a
    mkdir -p "$arm64_dir/lib"
    cp "$arm64_work/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" "$arm64_dir/lib/"
    echo "$yaml_version" >"$arm64_dir/VERSION"
    rm -rf "$arm64_work"
  fi
fi

# qemu-aarch64 in the kernel's binfmt_misc, with the fix-binary flag qemu-user-static's entry
# carries: the Docker Engine then runs the arm64 image (docker run --platform linux/arm64,
# tests/container/test_arm64.sh). The package registers it where binfmt_misc is mounted; a machine
# or container that starts without it mounted gets it mounted here. Nothing else is enabled.
if [[ "${1:-}" != "--build-only" ]]; then
  [[ -e /proc/sys/fs/binfmt_misc/status ]] || $SUDO mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || true
  if ! grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
    $SUDO update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 ||
      echo "install-deps: WARNING: qemu-aarch64 is not registered in binfmt_misc (mount it, then update-binfmts --enable qemu-aarch64); container.arm64 will fail" >&2
  fi
fi
