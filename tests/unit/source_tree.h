// Files of the source tree that unit tests read: fixtures, the chart's schema, the manual's
// examples. ctest passes the tree's root in IOGATE_SOURCE_DIR (tests/CMakeLists.txt): an
// environment variable, not a compile definition, so that no object depends on where the checkout
// lies and ccache shares them between checkouts.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace iogate::testing {

inline std::filesystem::path source_path(std::string_view relative) {
  const char* root = std::getenv("IOGATE_SOURCE_DIR");
  if (!root || !*root) {
    throw std::runtime_error(
        "IOGATE_SOURCE_DIR is not set: run the unit tests through ctest, or set it to the checkout");
  }
  return std::filesystem::path(root) / relative;
}

inline std::string read_source_file(std::string_view relative) {
  std::filesystem::path path = source_path(relative);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace iogate::testing
