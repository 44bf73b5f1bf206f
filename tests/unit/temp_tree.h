// Scratch space for tests, removed with everything in it when the test ends: a directory for
// trees of small files and symlinks (fake /proc and /sys, kubeconfigs, service-account and Secret
// volumes, certificates) or for real files on a real file system, and a single file. Both are
// made under /var/tmp unless told otherwise: a disk-backed file system (/tmp may be tmpfs, where
// O_DIRECT and extent maps behave otherwise).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/unique_fd.h"

namespace iogate::testing {

inline constexpr const char* kScratchBase = "/var/tmp";

struct TempTree {
  std::filesystem::path root;
  explicit TempTree(const std::string& base = kScratchBase) {
    std::string tmpl = base + "/iogate-test-XXXXXX";
    if (mkdtemp(tmpl.data())) root = tmpl;
  }
  ~TempTree() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  std::string path(const std::string& rel) const { return (root / rel).string(); }

  // Writes `text` to root/rel, creating the directories above it; returns the file's path.
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  // root/rel as a symlink whose text is `target`, as sysfs's /sys/dev/block entries are.
  void symlink(const std::string& target, const std::string& rel) const {
    std::filesystem::path p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_directory_symlink(target, p);
  }
  // How many entries root holds (what a test left behind).
  size_t entries() const { return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(root), {})); }
};

// One open scratch file, unlinked at the end.
struct TempFile {
  std::string path;
  UniqueFd fd;
  explicit TempFile(const std::string& base = kScratchBase) {
    std::string tmpl = base + "/iogate-test-XXXXXX";
    fd = UniqueFd(mkstemp(tmpl.data()));
    if (fd.valid()) path = tmpl;
  }
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

}  // namespace iogate::testing
