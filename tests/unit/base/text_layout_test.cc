// Wrapping pinned line by line: between pieces, then between the words of a piece too wide for a
// line, and inside a word only when it is wider than a continuation line.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/text_layout.h"

using namespace iogate;

namespace {

// The lines as the report prints them, so that a failure shows them.
std::string text(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("wrap_pieces: pieces that fit share a line, the next starts an indented one") {
  CHECK(text(wrap_pieces("run  ", {"aaa", "bbb"}, "  ", 20, 5)) == "run  aaa  bbb\n");
  CHECK(text(wrap_pieces("run  ", {"aaaa", "bbbb", "cccc"}, "  ", 20, 5)) == "run  aaaa  bbbb\n     cccc\n");
}

TEST_CASE("wrap_pieces: a line exactly `width` wide stays one line") {
  // 5 + 4 + 2 + 4 + 2 + 3 = 20 columns.
  CHECK(text(wrap_pieces("run  ", {"aaaa", "bbbb", "ccc"}, "  ", 20, 5)) == "run  aaaa  bbbb  ccc\n");
  CHECK(text(wrap_pieces("", {"aaaa bbbb cccc dddd"}, "", 19, 2)) == "aaaa bbbb cccc dddd\n");
  CHECK(text(wrap_pieces("", {"aaaa bbbb cccc dddd"}, "", 18, 2)) == "aaaa bbbb cccc\n  dddd\n");
}

TEST_CASE("wrap_pieces: a piece wider than a line breaks between its words, never inside one") {
  // The storage line's reason, once printed as "...says nothin" / "g about the medium)".
  CHECK(text(wrap_pieces("storage  ",
                         {"virtio",
                          "vda: a virtio disk, a VM's virtual disk (queue/rotational=1 says nothing about "
                          "the medium)"},
                         "  ", 50, 9)) ==
        "storage  virtio\n"
        "         vda: a virtio disk, a VM's virtual disk\n"
        "         (queue/rotational=1 says nothing about\n"
        "         the medium)\n");
}

TEST_CASE("wrap_pieces: a break at a run of spaces leaves none at either end of a line") {
  CHECK(text(wrap_pieces("", {"aaaa bbbb   cccc"}, "", 10, 2)) == "aaaa bbbb\n  cccc\n");
  CHECK(text(wrap_pieces("", {"aaaa bbbbb cccc"}, "", 10, 2)) == "aaaa bbbbb\n  cccc\n");
}

TEST_CASE("wrap_pieces: a word wider than a continuation line is split where each line ends") {
  std::string path = "/var/lib/" + std::string(30, 'p');
  CHECK(text(wrap_pieces("target   ", {"mounted at " + path}, "  ", 20, 9)) ==
        "target   mounted at\n"
        "         /var/lib/pp\n"
        "         ppppppppppp\n"
        "         ppppppppppp\n"
        "         pppppp\n");
  // After a shorter word, the long one fills the rest of its line before it is split.
  CHECK(text(wrap_pieces("", {"iogate probe " + std::string(30, 'q')}, "", 20, 4)) ==
        "iogate probe qqqqqqq\n"
        "    qqqqqqqqqqqqqqqq\n"
        "    qqqqqqq\n");
  CHECK(text(wrap_pieces("ab ", {std::string(12, 'x')}, "", 10, 3)) == "ab xxxxxxx\n   xxxxx\n");
}

TEST_CASE("wrap_pieces: widths count code points and skip escapes") {
  CHECK(text(wrap_pieces("", {"µµµµ ××××"}, "", 9, 0)) == "µµµµ ××××\n");
  CHECK(text(wrap_pieces("", {"µµµµ ××××"}, "", 8, 0)) == "µµµµ\n××××\n");
  CHECK(text(wrap_pieces("", {"\033[1mµµµµ\033[0m ××××"}, "", 9, 0)) == "\033[1mµµµµ\033[0m ××××\n");
}

TEST_CASE("wrap_words: words fill lines, continuation lines indented") {
  CHECK(text(wrap_words("warning  ", "the test file is in the page cache, so reads are fast", 30, 9)) ==
        "warning  the test file is in\n"
        "         the page cache, so\n"
        "         reads are fast\n");
  CHECK(text(wrap_words("  - ", "one  two\nthree", 80, 4)) == "  - one two three\n");
}
