#include "base/text_layout.h"

#include <algorithm>

namespace iogate {
namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Length of the CSI escape sequence ("\033[1m") starting at s[i], or 0 if none starts there.
size_t escape_length(std::string_view s, size_t i) {
  if (s[i] != '\033' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  size_t j = i + 2;
  while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7e)) ++j;
  return std::min(j + 1, s.size()) - i;
}

// Bytes of `s` that make up its first `columns` columns, with any escapes right after them.
size_t prefix_bytes(std::string_view s, size_t columns) {
  size_t i = 0, w = 0;
  while (i < s.size()) {
    if (size_t e = escape_length(s, i)) {
      i += e;
      continue;
    }
    if (w == columns) break;
    ++i;
    while (i < s.size() && is_continuation(s[i])) ++i;
    ++w;
  }
  return i;
}

}  // namespace

size_t display_width(std::string_view s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    if (size_t e = escape_length(s, i)) {
      i += e;
      continue;
    }
    if (!is_continuation(s[i])) ++w;
    ++i;
  }
  return w;
}

std::string pad_right(std::string_view s, size_t columns) {
  std::string out(s);
  size_t w = display_width(s);
  if (w < columns) out.append(columns - w, ' ');
  return out;
}

std::string pad_left(std::string_view s, size_t columns) {
  size_t w = display_width(s);
  std::string out(w < columns ? columns - w : 0, ' ');
  out += s;
  return out;
}

std::string label_column(std::string_view name) {
  return pad_right(name, std::max(kLabelColumns, display_width(name) + 2));
}

std::vector<std::string> wrap_pieces(std::string_view head, const std::vector<std::string>& pieces,
                                     std::string_view separator, size_t width, size_t indent) {
  std::vector<std::string> lines;
  const std::string margin(indent, ' ');
  const size_t sep_width = display_width(separator);
  std::string line(head);
  size_t col = display_width(head);
  bool has_piece = false;
  for (const std::string& piece : pieces) {
    std::string_view rest = piece;
    size_t w = display_width(rest);
    if (has_piece && col + sep_width + w > width) {
      lines.push_back(std::move(line));
      line = margin;
      col = indent;
      has_piece = false;
    }
    if (has_piece) {
      line += separator;
      col += sep_width;
    }
    // A piece wider than what is left breaks at its last space that fits, unless the word after
    // that space is wider than a whole continuation line: that word is split where the line ends.
    while (col < width && col + display_width(rest) > width) {
      size_t n = prefix_bytes(rest, width - col);
      size_t space = rest.rfind(' ', n);
      if (space != std::string_view::npos) {
        size_t next = std::min(rest.find_first_not_of(' ', space), rest.size());
        size_t end = std::min(rest.find(' ', next), rest.size());
        if (display_width(rest.substr(next, end - next)) <= width - std::min(indent, width)) n = space;
      }
      size_t cut = n;
      while (cut > 0 && rest[cut - 1] == ' ') --cut;
      while (n < rest.size() && rest[n] == ' ') ++n;
      line += rest.substr(0, cut);
      lines.push_back(std::move(line));
      line = margin;
      col = indent;
      rest.remove_prefix(n);
    }
    line += rest;
    col += display_width(rest);
    has_piece = true;
  }
  lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> wrap_words(std::string_view head, std::string_view text, size_t width, size_t indent) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && !(text[j] == ' ' || text[j] == '\n' || text[j] == '\t')) ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return wrap_pieces(head, words, " ", width, indent);
}

std::string indent_lines(std::string_view text, std::string_view prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.append(prefix).append(text.substr(start, end - start)).append("\n");
    start = end + 1;
  }
  return out;
}

}  // namespace iogate
