#include "base/quote.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {
namespace {

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one.
size_t utf8_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80                   ? 1
             : (c >= 0xC2 && c <= 0xDF) ? 2
             : (c >= 0xE0 && c <= 0xEF) ? 3
             : (c >= 0xF0 && c <= 0xF4) ? 4
                                        : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string quote_value(std::string_view value) {
  // fmt rather than "\"" + string&&: GCC 12 warns falsely (-Wrestrict, its bug 105651) on the latter.
  if (value.size() <= kQuotedValueMax) return fmt::format("\"{}\"", log_safe(value, std::string::npos));
  size_t cut = kQuotedValueMax;
  while (cut > 0 && utf8_continuation(value[cut])) --cut;  // not inside a multi-byte character
  return fmt::format("a value of {} bytes starting \"{}…\"", format_thousands(double(value.size())),
                     log_safe(value.substr(0, cut), std::string::npos));
}

std::string log_safe(std::string_view text, size_t max) {
  std::string out;
  bool cut = false;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = utf8_length(text, i);
    std::string piece =
        (n == 0 || c < 0x20 || c == 0x7f) ? fmt::format("\\x{:02x}", c) : std::string(text.substr(i, n));
    if (out.size() + piece.size() > max) {
      cut = true;
      break;
    }
    out += piece;
    i += n == 0 ? 1 : n;
  }
  if (cut) out += "...";
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace iogate
