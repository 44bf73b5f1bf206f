#include "base/quote.h"

#include <fmt/format.h>

#include "base/units.h"

namespace iogate {
namespace {

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string quote_value(std::string_view value) {
  if (value.size() <= kQuotedValueMax) return "\"" + printable(value) + "\"";
  size_t cut = kQuotedValueMax;
  while (cut > 0 && utf8_continuation(value[cut])) --cut;  // not inside a multi-byte character
  return fmt::format("a value of {} bytes starting \"{}…\"", format_thousands(double(value.size())),
                     printable(value.substr(0, cut)));
}

}  // namespace iogate
