// A scratch directory under /tmp for trees of small text files and symlinks (fake /proc and /sys,
// kubeconfigs, service-account layouts), removed with everything in it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace iogate::testing {

struct TempTree {
  std::filesystem::path root;
  TempTree() {
    char tmpl[] = "/tmp/iogate-test-XXXXXX";
    if (char* p = mkdtemp(tmpl)) root = p;
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
};

}  // namespace iogate::testing
