// The kubelet's service-account layout in a scratch tree, for config and token-rotation tests.
#pragma once

#include <filesystem>
#include <string>

#include "temp_tree.h"

namespace iogate::testing {

// The kubelet's projected-volume layout for a service account:
//   DIR/..2024_01_01_00_00_00.1/{token,ca.crt,namespace}   the payload of one generation
//   DIR/..data -> ..2024_...1                                swapped atomically (rename) on update
//   DIR/token -> ..data/token, DIR/ca.crt -> ..data/ca.crt, DIR/namespace -> ..data/namespace
struct ServiceAccountDir {
  const TempTree& dir;
  int generation = 0;

  explicit ServiceAccountDir(const TempTree& d) : dir(d) {}

  // Writes a new generation and swaps ..data to it, as the kubelet's AtomicWriter does.
  void publish(const std::string& token, const std::string& ca, const std::string& ns) {
    std::string gen = "..gen." + std::to_string(++generation);
    dir.write(gen + "/token", token);
    dir.write(gen + "/ca.crt", ca);
    if (!ns.empty()) dir.write(gen + "/namespace", ns);
    std::filesystem::path tmp = dir.root / "..data_tmp";
    std::filesystem::create_symlink(gen, tmp);
    std::filesystem::rename(tmp, dir.root / "..data");  // rename(2) over the old link: atomic
    for (const char* f : {"token", "ca.crt", "namespace"}) {
      std::filesystem::path link = dir.root / f;
      if (!std::filesystem::is_symlink(link)) std::filesystem::create_symlink(std::string("..data/") + f, link);
    }
  }
};

}  // namespace iogate::testing
