// A scratch directory under /tmp for fake /proc and /sys trees, removed with everything in it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace iogate::testing {

struct TempTree {
  std::filesystem::path root;
  TempTree() {
    char tmpl[] = "/tmp/iogate-device-XXXXXX";
    if (char* p = mkdtemp(tmpl)) root = p;
  }
  ~TempTree() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  // Writes `text` to root/rel, creating the directories above it.
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // root/rel as a symlink whose text is `target`, as sysfs's /sys/dev/block entries are.
  void symlink(const std::string& target, const std::string& rel) const {
    std::filesystem::path p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_directory_symlink(target, p);
  }
};

}  // namespace iogate::testing
