#include "webhook/json_patch.h"

namespace iogate {

std::string pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string pointer(std::initializer_list<std::string_view> tokens) {
  std::string out;
  for (std::string_view t : tokens) {
    out.push_back('/');
    out += pointer_token(t);
  }
  return out;
}

nlohmann::json patch_add(std::string path, nlohmann::json value) {
  return {{"op", "add"}, {"path", std::move(path)}, {"value", std::move(value)}};
}

nlohmann::json patch_replace(std::string path, nlohmann::json value) {
  return {{"op", "replace"}, {"path", std::move(path)}, {"value", std::move(value)}};
}

}  // namespace iogate
