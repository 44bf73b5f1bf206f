#include "base/split_list.h"

namespace iogate {

std::vector<std::string_view> split_list(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  for (size_t start = 0;;) {
    size_t end = text.find(separator, start);
    items.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

}  // namespace iogate
