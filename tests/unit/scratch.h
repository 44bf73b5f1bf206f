// Scratch files and directories for tests that need real ones on a real file system
// (/var/tmp: ext4 here, not tmpfs), removed with everything in them when the test ends.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <string>

#include "base/unique_fd.h"

namespace iogate::testing {

struct ScratchFile {
  std::string path;
  UniqueFd fd;
  explicit ScratchFile(std::string dir = "/var/tmp") {
    std::string tmpl = dir + "/iogate-test-XXXXXX";
    fd = UniqueFd(mkstemp(tmpl.data()));
    if (fd.valid()) path = tmpl;
  }
  ~ScratchFile() {
    if (!path.empty()) unlink(path.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
};

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(std::string dir = "/var/tmp") {
    std::string tmpl = dir + "/iogate-test-XXXXXX";
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  size_t entries() const { return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path), {})); }
};

}  // namespace iogate::testing
