# Cross-builds iogate for arm64 (aarch64: GH200 and GB200 nodes) on a Debian amd64 host, from
# Debian's packages alone (scripts/install-deps.sh installs them):
#   - the compiler is g++-aarch64-linux-gnu, which searches the multiarch directories
#     /usr/include/aarch64-linux-gnu and /usr/lib/aarch64-linux-gnu as well as /usr/include;
#   - the static archives the link takes (libaio, OpenSSL, Boost.Program_options) are the :arm64
#     -dev packages, installed beside the amd64 ones (dpkg --add-architecture arm64). The
#     header-only libraries (nlohmann-json, spdlog and fmt as iogate uses them, doctest,
#     cpp-httplib's single header) are the host's: their headers are the same for every CPU;
#   - libyaml-cpp-dev is not Multi-Arch: same, so its arm64 package cannot be installed beside the
#     amd64 one: install-deps.sh unpacks its static archive, at the amd64 package's version, into
#     third_party/arm64/ (the headers are the host's).
# The top-level CMakeLists.txt then finds every static archive by name as for a native build:
# CMake searches /usr/lib/<CMAKE_LIBRARY_ARCHITECTURE>, which is aarch64-linux-gnu here, and not
# the amd64 directory.
#
#   ARCH=arm64 bash scripts/build.sh [targets...]     (into build-arm64/)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

get_filename_component(_iogate_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_iogate_yaml_cpp "${_iogate_root}/third_party/arm64/lib/libyaml-cpp.a")
if(NOT EXISTS "${_iogate_yaml_cpp}")
  message(FATAL_ERROR "${_iogate_yaml_cpp} is missing (arm64 yaml-cpp): bash scripts/install-deps.sh")
endif()
list(APPEND CMAKE_LIBRARY_PATH "${_iogate_root}/third_party/arm64/lib")

# Tests that run a built binary (add_test with a target) run it under qemu-user, without -L: the
# dynamic unit binaries load through the multiarch libc6:arm64 (/lib/ld-linux-aarch64.so.1); -L
# /usr/aarch64-linux-gnu would pair the cross toolchain's older loader with that libc, and threads
# hang (tests/cross/arm64.sh). iogate itself is static.
find_program(IOGATE_QEMU_AARCH64 qemu-aarch64-static)
if(IOGATE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${IOGATE_QEMU_AARCH64}")
endif()
