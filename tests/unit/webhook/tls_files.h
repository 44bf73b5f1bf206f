// The kubelet's Secret-volume layout for the webhook's serving certificate, whose `..data` link is
// swapped on every update; the certificates themselves come from pki.h.
#pragma once

#include <filesystem>
#include <string>

#include "pki.h"
#include "temp_tree.h"

namespace iogate::testing {

// A Secret mounted the kubelet's way:
//   DIR/..2026_01_01_00_00_00.N/{tls.crt,tls.key}   one generation of the Secret's data
//   DIR/..data -> ..2026_...N                        renamed over atomically on update
//   DIR/tls.crt -> ..data/tls.crt, DIR/tls.key -> ..data/tls.key
struct SecretVolume {
  const TempTree& dir;
  int generation = 0;

  explicit SecretVolume(const TempTree& d) : dir(d) {}

  std::string cert_path() const { return dir.path("tls.crt"); }
  std::string key_path() const { return dir.path("tls.key"); }

  void publish(const std::string& cert_pem, const std::string& key_pem) {
    namespace fs = std::filesystem;
    std::string old_gen = generation ? "..2026_01_01_00_00_00." + std::to_string(generation) : "";
    std::string gen = "..2026_01_01_00_00_00." + std::to_string(++generation);
    dir.write(gen + "/tls.crt", cert_pem);
    dir.write(gen + "/tls.key", key_pem);
    fs::create_symlink(gen, dir.root / "..data_tmp");
    fs::rename(dir.root / "..data_tmp", dir.root / "..data");
    for (const char* f : {"tls.crt", "tls.key"}) {
      if (!fs::is_symlink(dir.root / f)) fs::create_symlink(std::string("..data/") + f, dir.root / f);
    }
    if (!old_gen.empty()) fs::remove_all(dir.root / old_gen);  // as the kubelet does
  }
  void publish_files(const std::string& cert_file, const std::string& key_file) {
    publish(slurp(cert_file), slurp(key_file));
  }
};

}  // namespace iogate::testing
