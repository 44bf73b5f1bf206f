#include "webhook/json_patch.h"

#include <memory>

namespace iogate {
namespace {

// Where nlohmann's serializer writes: only counted.
class CountingOutput : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  void write_character(char) override { ++bytes; }
  void write_characters(const char*, size_t length) override { bytes += length; }
  size_t bytes = 0;
};

}  // namespace

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

nlohmann::json patch_copy(std::string from, std::string path) {
  return {{"op", "copy"}, {"from", std::move(from)}, {"path", std::move(path)}};
}

size_t json_text_bytes(const nlohmann::json& value) {
  auto out = std::make_shared<CountingOutput>();
  nlohmann::detail::serializer<nlohmann::json> writer(out, ' ', nlohmann::json::error_handler_t::replace);
  writer.dump(value, false, false, 0);
  return out->bytes;
}

}  // namespace iogate
