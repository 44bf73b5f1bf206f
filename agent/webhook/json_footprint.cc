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
constexpr size_t kPending = 3 * kSlot;           // a value on the destructor's stack (see the header)
// Containers nested deeper than this have their children counted as always pending: valid
// reviews nest about 15 deep, and a count per level must not cost more than the text.
constexpr size_t kTrackedDepth = 256;

size_t text_bytes(size_t length) { return length > kShortString ? chunk(length + 1) : 0; }

}  // namespace

size_t json_footprint(std::string_view text) {
  // Containers open around the current position, one bit each (true: an object); a JSON nested
  // deeper than the body is long cannot be, so this is at most 1/8 of the text.
  std::vector<bool> in_object;
  size_t bytes = 0, longest_token = 0;
  // The destructor's stack: children seen so far in each open container (the first kTrackedDepth
  // levels), the sum over them of those before the last (pending while the last is emptied), the
  // children of deeper containers, and the most the stack holds when a container is emptied.
  std::vector<size_t> seen;
  size_t pending = 0, untracked = 0, most = 0;
  // A value in an array costs its element; a member's value is in its node; the root has a slot.
  auto value = [&] {
    if (in_object.empty()) bytes += kSlot;
    else if (!in_object.back()) bytes += kElement;
    if (in_object.empty()) return;
    if (in_object.size() > kTrackedDepth) {
      ++untracked;
    } else if (++seen.back() > 1) {
      ++pending;
    }
  };
  auto close = [&] {
    if (in_object.empty()) return;
    if (in_object.size() <= kTrackedDepth) {
      size_t children = seen.back(), before = children > 0 ? children - 1 : 0;
      most = std::max(most, children + pending - before);
      pending -= before;
      seen.pop_back();
    }
    in_object.pop_back();
  };
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '{' || c == '[') {
      value();
      bytes += c == '{' ? kObject : kArray;
      in_object.push_back(c == '{');
      if (in_object.size() <= kTrackedDepth) seen.push_back(0);
      ++i;
    } else if (c == '}' || c == ']') {
      close();
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
  // Containers left open (cut text) are emptied too.
  while (!in_object.empty()) close();
  return bytes + 6 * longest_token + 2 * chunk(0) + kPending * (most + untracked);
}

}  // namespace iogate
