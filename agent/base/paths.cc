#include "base/paths.h"

namespace iogate {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string under_root(const std::string& root, std::string_view path) {
  std::string base = strip_trailing_slashes(root);
  if (base == "/") return std::string(path);
  return base + std::string(path);
}

}  // namespace iogate
