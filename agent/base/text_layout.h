// Laying out terminal text: widths in columns and lines that wrap between fields and words.
//
// Widths count code points, not bytes ("µ", "×", "–" and the block elements are one column
// each), and skip ANSI escape sequences, so coloured and plain output lay out the same.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace iogate {

// The human report's left column: "read     ", "latency  ".
inline constexpr size_t kLabelColumns = 9;
// No report line is wider than this.
inline constexpr size_t kReportColumns = 100;

size_t display_width(std::string_view s);

// `s` padded with spaces on the right (left) to `columns`; unchanged if already as wide.
std::string pad_right(std::string_view s, size_t columns);
std::string pad_left(std::string_view s, size_t columns);

// `name` padded to kLabelColumns (at least two spaces after it).
std::string label_column(std::string_view name);

// Lines made of `head` followed by `pieces` joined with `separator`. A piece that would pass
// `width` starts a continuation line of `indent` spaces; a piece wider than a whole line (a long
// reason) breaks at its spaces, and only a word wider than a continuation line (a long path) is
// split where the line ends. Lines carry no newline.
std::vector<std::string> wrap_pieces(std::string_view head, const std::vector<std::string>& pieces,
                                     std::string_view separator, size_t width, size_t indent);

// Every line of `text` (newline-separated, the last one terminated or not) prefixed with
// `prefix`, each ending in a newline: a table nested under a heading.
std::string indent_lines(std::string_view text, std::string_view prefix);

// `text` split into words and wrapped like wrap_pieces with single spaces.
std::vector<std::string> wrap_words(std::string_view head, std::string_view text, size_t width, size_t indent);

}  // namespace iogate
