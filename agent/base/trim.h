// Whitespace off both ends of a text: a token or kernel file's final newline, a header's padding,
// what people type around a number. Whitespace is ASCII's: space, \t, \n, \v, \f, \r.
#pragma once

#include <string_view>

namespace iogate {

std::string_view trim_space(std::string_view text);

}  // namespace iogate
