#include "webhook/json_footprint.h"

#include <algorithm>
#include <vector>

namespace iogate {
namespace {

// glibc malloc's chunk for a request of n bytes.
constexpr size_t chunk(size_t n) { return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }

constexpr size_t kSlot = 16;                     // sizeof(nlohmann::json)
constexpr size_t kObject = chunk(48);            // std::map
constexpr size_t kMember = chunk(32 + 32 + 16);  // red-black node: links, key, value
constexpr size_t kArray = chunk(24);             // std::vector
constexpr size_t kElement = 3 * kSlot;           // see the header
constexpr size_t kString = chunk(32);            // std::string
constexpr size_t kShortString = 15;              // libstdc++ keeps up to 15 bytes in the object

size_t text_bytes(size_t length) { return length > kShortString ? chunk(length + 1) : 0; }

}  // namespace

size_t json_footprint(std::string_view text) {
  // Containers open around the current position, one bit each (true: an object); a JSON nested
  // deeper than the body is long cannot be, so this is at most 1/8 of the text.
  std::vector<bool> in_object;
  size_t bytes = 0, longest_token = 0;
  // A value in an array costs its element; a member's value is in its node; the root has a slot.
  auto value = [&] {
    if (in_object.empty()) bytes += kSlot;
    else if (!in_object.back()) bytes += kElement;
  };
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '{' || c == '[') {
      value();
      bytes += c == '{' ? kObject : kArray;
      in_object.push_back(c == '{');
      ++i;
    } else if (c == '}' || c == ']') {
      if (!in_object.empty()) in_object.pop_back();
      ++i;
    } else if (c == '"') {
      size_t start = ++i;
      while (i < n && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      size_t length = std::min(i, n) - start;
      longest_token = std::max(longest_token, length + 2);
      ++i;
      size_t next = i;
      while (next < n && (text[next] == ' ' || text[next] == '\t' || text[next] == '\n' || text[next] == '\r')) ++next;
      if (next < n && text[next] == ':') {  // a key: one member
        bytes += kMember + text_bytes(length);
      } else {
        value();
        bytes += kString + text_bytes(length);
      }
    } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
      size_t start = i;
      while (i < n && text[i] != ',' && text[i] != ']' && text[i] != '}' && text[i] != ' ' && text[i] != '\n' &&
             text[i] != '\r' && text[i] != '\t')
        ++i;
      longest_token = std::max(longest_token, i - start);
      value();
    } else {
      ++i;  // whitespace, ',' and ':'
    }
  }
  return bytes + 6 * longest_token;
}

}  // namespace iogate
